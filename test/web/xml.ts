// A small well-formedness check of XML text for the tests of SVG pictures
// (test/cli/graph-svg.test.ts, test/web/pages.test.ts): tags nest, one root,
// attributes quoted; it returns the element names and the text of <text>
// elements (character references decoded). Not a full XML parser: enough to
// hold our SVG writer (src/query/graph-layout.ts) to a well-formed document.

/** The element names of a well-formed XML text in document order, with the text inside each <text>; throws where tags do not nest. */
export function xmlElements(xml: string): { names: string[]; texts: string[]; root: string } {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const open: string[] = [];
  const names: string[] = [];
  const texts: string[] = [];
  let root = '';
  const re = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(body)) !== null) {
    at = re.lastIndex;
    const [, close, name, attrs, selfClose, text] = m;
    if (text !== undefined) {
      if (open.length === 0 && text.trim() !== '') throw new Error(`text outside the root: ${text.slice(0, 40)}`);
      if (open[open.length - 1] === 'text') texts.push(text.replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d))));
      continue;
    }
    if (close) {
      const top = open.pop();
      if (top !== name) throw new Error(`</${name}> closes <${top}>`);
      continue;
    }
    if (names.length === 0) root = `${name}${attrs}`;
    else if (open.length === 0) throw new Error(`a second root <${name}>`);
    names.push(name!);
    if (!selfClose) open.push(name!);
  }
  if (at !== body.length) throw new Error(`not well-formed at offset ${at}: ${body.slice(at, at + 40)}`);
  if (open.length > 0) throw new Error(`unclosed <${open.join('>, <')}>`);
  return { names, texts, root };
}

