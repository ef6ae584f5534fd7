// FileIO on S3 and S3-compatible object storage: paths `s3://bucket/key`
// (`s3a://` and `s3n://`, as Hadoop writes them, name the same object).
// The AWS SDK is loaded on the first request (a lazy require), so a
// command that never touches an `s3://` path never pays for it.
//
// Configuration is the SDK's own: credentials and region through its standard
// chain (environment, shared profile), the endpoint through
// `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` (or a profile's endpoint_url).
// Path-style addressing (`http://host/bucket/key`) when MIMIR_S3_PATH_STYLE=1,
// and on its own for an endpoint that is an IP address or localhost (no
// virtual host can resolve there).
//
// Invariants: an `InputFile.read` is one ranged GET of exactly the bytes
// asked (a footer or page read never downloads the whole object); `size()`
// is one HEAD, kept for the IO's lifetime for Iceberg's immutable file kinds
// (data, manifests, metadata files: a new version is a new name). Every
// request is bounded in time (an AbortSignal timeout per attempt) and retried
// with exponential backoff and full jitter on 5xx, throttling, timeouts and
// broken connections, at most `tries` attempts; anything else fails at once.
// Every failure is an IoError naming the operation, the s3:// path, the HTTP
// status and S3 error code (code ENOENT for a missing object, EEXIST for
// writeNew over an existing one), and how many attempts were made.
//
// Crash story: S3 makes a PUT visible whole or not at all, so `writeAtomic`
// is one PUT. A write above `partBytes` is a multipart upload, visible only
// when CompleteMultipartUpload lands; a crash before that leaves an
// incomplete upload no reader sees (it costs storage until the bucket's
// AbortIncompleteMultipartUpload lifecycle rule, or a later abort, drops it);
// a failure this process sees aborts the upload. `writeNew` first asks HEAD
// (an existing object: EEXIST, nothing written) and then PUTs with
// `If-None-Match: *`, which S3 (since 2024) and most compatible servers honour
// atomically (412: EEXIST). A server that ignores the header leaves a window
// between that HEAD and the PUT in which two writers of the same new name
// both succeed, the later replacing the earlier; Mimir names new files with
// random UUIDs, so only a same-name race of two writers could hit it.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { S3Client } from '@aws-sdk/client-s3';
import { IoError, type FileInfo, type FileIO, type InputFile } from './fileio.ts';

/** Whether a path names an object in S3 (`s3://`, `s3a://`, `s3n://`). */
export function isS3Path(path: string): boolean {
  return /^s3[an]?:\/\//i.test(path);
}

/** `s3://bucket/key` split; the key has no leading slash (empty for the bucket itself). */
export function parseS3Path(path: string): { bucket: string; key: string } {
  const m = /^s3[an]?:\/\/([^/]+)\/?(.*)$/i.exec(path);
  if (!m) throw new Error(`expected an s3://bucket/key path, found '${path}'`);
  return { bucket: m[1]!, key: m[2]!.replace(/\/{2,}/g, '/') };
}

/** `s3a://b/k/` and `s3://b/k` name the same place: the canonical `s3://b/k`. */
export function normS3Path(path: string): string {
  const { bucket, key } = parseS3Path(path);
  const k = key.replace(/\/+$/, '');
  return k === '' ? `s3://${bucket}` : `s3://${bucket}/${k}`;
}

/** `path` equals `prefix` or lies below it (both s3 paths; scheme variants alike). */
export function isWithinS3(path: string, prefix: string): boolean {
  const p = normS3Path(path);
  const r = normS3Path(prefix);
  return p === r || p.startsWith(r + '/');
}

export interface S3Options {
  /** Bound on each request attempt (default $MIMIR_S3_TIMEOUT_MS, else 30 s: a 16 MiB part on a slow link). */
  timeoutMs?: number;
  /** Attempts per request, the first included (default 5). */
  tries?: number;
  /** First backoff; doubles per retry, full jitter (default 100 ms). */
  baseDelayMs?: number;
  /** Writes larger than this go up in parts of this size (default 16 MiB; S3's minimum part is 5 MiB). */
  partBytes?: number;
  /** The endpoint, over the SDK's own choice (AWS_ENDPOINT_URL_S3, …): a test's proxy. */
  endpoint?: string;
  /** Test hook: the jitter's random source. */
  random?: () => number;
}

/** MIMIR_S3_TIMEOUT_MS overrides the per-attempt bound (a slow link, or a test's proxy that holds requests). */
const envTimeout = Number(process.env.MIMIR_S3_TIMEOUT_MS);
const DEFAULTS = { timeoutMs: Number.isFinite(envTimeout) && envTimeout > 0 ? envTimeout : 30_000, tries: 5, baseDelayMs: 100, partBytes: 16 * 1024 * 1024 };

/** Iceberg's file kinds that are never rewritten under the same name: their size is cached. */
const IMMUTABLE = /\.(parquet|avro|metadata\.json|puffin)$/;

/** S3 error codes that mean "slow down / try again". */
const RETRY_CODES = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout', 'RequestTimeTooSkewed', 'InternalError', 'ServiceUnavailable', 'TimeoutError', 'AbortError']);
/** Node socket errors that mean the connection broke, not that the request was wrong. */
const RETRY_ERRNO = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET']);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(e: unknown): number | undefined {
  return (e as SdkError | undefined)?.$metadata?.httpStatusCode;
}

function retryable(e: unknown): boolean {
  const err = e as SdkError;
  const status = statusOf(e);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  if (RETRY_CODES.has(err?.name ?? '') || RETRY_ERRNO.has(err?.code ?? '')) return true;
  // a response the SDK could not parse (a connection cut mid-body, an HTML error page) has no status;
  // missing credentials or a bad configuration have none either, and no retry mends them
  const name = err?.name ?? '';
  return status === undefined && !name.startsWith('NoSuch') && !/Credential|Config|Invalid/.test(name);
}

/** What a failure says: `HTTP 503 SlowDown: …` or the socket error. */
function describe(e: unknown): { code: string | undefined; reason: string } {
  const err = e as SdkError;
  const status = statusOf(e);
  const name = err?.name && err.name !== 'Error' ? err.name : err?.code;
  const missing = status === 404 || name === 'NoSuchKey' || name === 'NotFound';
  const exists = status === 412 || name === 'PreconditionFailed';
  const code = missing ? 'ENOENT' : exists ? 'EEXIST' : name;
  const msg = (err?.message ?? String(e)).trim();
  const reason = `${status !== undefined ? `HTTP ${status} ` : ''}${name ?? ''}${msg && msg !== name && msg !== 'UnknownError' ? `: ${msg}` : ''}`.trim();
  return { code, reason };
}

function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data) : data;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The endpoint the SDK will use from the environment, if any (to choose path-style addressing). */
function envEndpoint(): string | undefined {
  return process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL || undefined;
}

/** Path-style for MIMIR_S3_PATH_STYLE=1, and for an endpoint on an IP address or localhost. */
export function wantsPathStyle(endpoint: string | undefined, flag = process.env.MIMIR_S3_PATH_STYLE): boolean {
  if (flag === '1' || flag === 'true') return true;
  if (flag === '0' || flag === 'false' || endpoint === undefined) return false;
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[');
}

type Sdk = typeof import('@aws-sdk/client-s3');

/** The client's send, seen without its per-command overloads (each command's output is read by its caller). */
interface Sender {
  send(command: object, opts: { abortSignal: AbortSignal }): Promise<unknown>;
}

export class S3FileIO implements FileIO {
  private readonly opts: Required<Omit<S3Options, 'random' | 'endpoint'>> & Pick<S3Options, 'endpoint'> & { random: () => number };
  private sdk: Promise<{ sdk: Sdk; client: S3Client }> | undefined;
  private readonly sizes = new Map<string, number>();
  /** Requests sent, attempts included (for tests and diagnostics). */
  requests = 0;

  constructor(opts: S3Options = {}) {
    this.opts = { ...DEFAULTS, random: Math.random, ...opts };
  }

  private load(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.sdk ??= (async () => {
      // The SDK warns once per process (stderr) that its releases after January
      // 2027 need node >= 22. It reads a variable that turns the notice off,
      // but no published documentation names it, so it is left alone here.
      // require, not import(): the CLI bundle runs in a vm.Script, where a dynamic
      // import needs a loader callback node 20 does not always give (scripts/build.ts
      // keeps the package outside the bundle)
      const sdk = createRequire(import.meta.url)('@aws-sdk/client-s3') as Sdk;
      const client = new sdk.S3Client({
        forcePathStyle: wantsPathStyle(this.opts.endpoint ?? envEndpoint()),
        ...(this.opts.endpoint !== undefined ? { endpoint: this.opts.endpoint } : {}),
        maxAttempts: 1, // retries are ours (below): one policy, counted and reported
        // checksums only where S3 requires them: compatible servers do not all take trailing checksums
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      return { sdk, client };
    })();
    return this.sdk;
  }

  /** Send one request with timeouts and retries; failures become IoErrors naming `op` and `path`. */
  private async send<T>(op: string, path: string, make: (sdk: Sdk) => object, read?: (out: unknown, signal: AbortSignal) => Promise<T>): Promise<T> {
    const { sdk, client } = await this.load();
    const { tries, timeoutMs, baseDelayMs, random } = this.opts;
    for (let attempt = 1; ; attempt++) {
      this.requests++;
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const out = await (client as unknown as Sender).send(make(sdk), { abortSignal: signal });
        // the body is read under the same deadline: a stalled stream is a timeout too
        return read ? await read(out, signal) : (out as T);
      } catch (e) {
        const err = signal.aborted && statusOf(e) === undefined ? Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' }) : e;
        if (attempt < tries && retryable(err)) {
          await sleep(random() * baseDelayMs * 2 ** (attempt - 1));
          continue;
        }
        const { code, reason } = describe(err);
        const detail = attempt > 1 ? `${attempt} attempts` : undefined;
        throw new IoError(op, path, { code, message: reason }, detail);
      }
    }
  }

  async open(path: string): Promise<InputFile> {
    parseS3Path(path);
    return new S3InputFile(this, path);
  }

  /** The object's size: one HEAD, cached for immutable file kinds. */
  async size(path: string): Promise<number> {
    const known = this.sizes.get(path);
    return known ?? this.head(path);
  }

  /** One HEAD: the object's size (kept for immutable kinds); ENOENT when absent. */
  private async head(path: string): Promise<number> {
    const { bucket, key } = parseS3Path(path);
    const head = await this.send('stat', path, (s) => new s.HeadObjectCommand({ Bucket: bucket, Key: key }));
    const n = (head as { ContentLength?: number }).ContentLength ?? 0;
    if (IMMUTABLE.test(key)) this.sizes.set(path, n);
    return n;
  }

  /** Bytes [start, end) by one ranged GET. */
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const len = Math.max(0, end - start);
    if (len === 0) return new Uint8Array(0);
    const { bucket, key } = parseS3Path(path);
    const got = await this.send(
      'read',
      path,
      (s) => new s.GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }),
      (out, signal) => bodyBytes(out, signal),
    );
    if (got.length !== len) {
      throw new IoError('read', path, { code: 'EIO', message: `short read: wanted ${len} bytes from ${start}, the object gave ${got.length} (it ends before ${end}?)` });
    }
    return got;
  }

  async readAll(path: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Path(path);
    return this.send('read', path, (s) => new s.GetObjectCommand({ Bucket: bucket, Key: key }), (out, signal) => bodyBytes(out, signal));
  }

  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    await this.put(path, bytesOf(data), false);
  }

  async writeNew(path: string, data: Uint8Array | string): Promise<void> {
    const body = bytesOf(data);
    if (await this.exists(path)) {
      throw new IoError('create', path, { code: 'EEXIST', message: 'the object already exists' }, `${body.length} bytes, nothing written`);
    }
    try {
      await this.put(path, body, true);
    } catch (e) {
      // a retried PUT whose first attempt landed finds its own object: same bytes, same ETag
      if ((e as IoError).code === 'EEXIST' && (await this.holds(path, body))) return;
      throw e;
    }
  }

  /** The object at `path` is exactly `body` (its ETag is the MD5 of a single-PUT object). */
  private async holds(path: string, body: Uint8Array): Promise<boolean> {
    if (body.length > this.opts.partBytes) return false; // a multipart ETag is not a plain MD5
    const { bucket, key } = parseS3Path(path);
    try {
      const head = (await this.send('stat', path, (s) => new s.HeadObjectCommand({ Bucket: bucket, Key: key }))) as { ETag?: string };
      return head.ETag?.replace(/"/g, '') === createHash('md5').update(body).digest('hex');
    } catch {
      return false;
    }
  }

  private async put(path: string, body: Uint8Array, ifAbsent: boolean): Promise<void> {
    const { bucket, key } = parseS3Path(path);
    this.sizes.delete(path);
    const cond = ifAbsent ? { IfNoneMatch: '*' } : {};
    if (body.length <= this.opts.partBytes) {
      await this.send('write', path, (s) => new s.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length, ...cond }));
      return;
    }
    const created = (await this.send('write', path, (s) => new s.CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))) as { UploadId?: string };
    const uploadId = created.UploadId!;
    try {
      const parts: { PartNumber: number; ETag: string }[] = [];
      for (let off = 0, n = 1; off < body.length; off += this.opts.partBytes, n++) {
        const chunk = body.subarray(off, Math.min(body.length, off + this.opts.partBytes));
        const out = (await this.send('write', path, (s) => new s.UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: n, Body: chunk, ContentLength: chunk.length }))) as { ETag?: string };
        parts.push({ PartNumber: n, ETag: out.ETag ?? '' });
      }
      await this.send('write', path, (s) => new s.CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts }, ...cond }));
    } catch (e) {
      // best effort: what is not aborted is invisible and dropped by the bucket's lifecycle rule
      await this.send('abort the upload of', path, (s) => new s.AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      throw e;
    }
  }

  /** Asks the store every time (never the size cache): another process may have deleted the object. */
  async exists(path: string): Promise<boolean> {
    try {
      await this.head(path);
      return true;
    } catch (e) {
      if ((e as IoError).code === 'ENOENT') return false;
      throw e;
    }
  }

  async list(dir: string): Promise<FileInfo[]> {
    const { bucket, key } = parseS3Path(dir);
    const shown = dir.replace(/\/+$/, '');
    const prefix = key === '' ? '' : key.replace(/\/+$/, '') + '/';
    const out: FileInfo[] = [];
    let token: string | undefined;
    do {
      const page = (await this.send('list', dir, (s) => new s.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1000, ...(token ? { ContinuationToken: token } : {}) }))) as {
        Contents?: { Key?: string; Size?: number; LastModified?: Date }[];
        IsTruncated?: boolean;
        NextContinuationToken?: string;
      };
      for (const o of page.Contents ?? []) {
        if (!o.Key || o.Key.endsWith('/')) continue; // a "folder" marker object is no file
        out.push({ path: `${shown}/${o.Key.slice(prefix.length)}`, size: o.Size ?? 0, mtimeMs: o.LastModified?.getTime() ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async delete(path: string): Promise<void> {
    const { bucket, key } = parseS3Path(path);
    this.sizes.delete(path);
    // S3 answers 204 for a missing key too: a missing object is not an error
    await this.send('delete', path, (s) => new s.DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }
}

/** The whole body of a GET; a stream still flowing when `signal` fires is destroyed (the read fails, and is retried). */
async function bodyBytes(out: unknown, signal: AbortSignal): Promise<Uint8Array> {
  const body = (out as { Body?: { transformToByteArray(): Promise<Uint8Array>; destroy?: (e?: Error) => void } }).Body;
  if (!body) return new Uint8Array(0);
  const stop = (): void => body.destroy?.(Object.assign(new Error('the body stalled past the request timeout'), { name: 'TimeoutError' }));
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await body.transformToByteArray();
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

class S3InputFile implements InputFile {
  constructor(
    private readonly io: S3FileIO,
    readonly path: string,
  ) {}
  size(): Promise<number> {
    return this.io.size(this.path);
  }
  read(start: number, end: number): Promise<Uint8Array> {
    return this.io.readRange(this.path, start, end);
  }
  async close(): Promise<void> {}
}
