// Warnings of the lake layer: things a reader tolerates, as other engines do,
// but a person should know (a foreign table whose manifest list miscounts its
// manifest's entries, say). Each distinct message is reported once per
// process, to the listeners if any are set (a test, a server's log), else on
// stderr as `mimir: warning: …`. Nothing here changes what is read.

type Listener = (message: string) => void;

const seen = new Set<string>();
const listeners = new Set<Listener>();

/** Report `message` once per process. */
export function warn(message: string): void {
  if (seen.has(message)) return;
  seen.add(message);
  if (listeners.size === 0) {
    process.stderr.write(`mimir: warning: ${message}\n`);
    return;
  }
  for (const l of listeners) l(message);
}

/** Receive warnings instead of stderr until the returned function is called. */
export function onWarning(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
