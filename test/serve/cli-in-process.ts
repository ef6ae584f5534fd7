// Runs the CLI's `main` in this process with its output captured (the same
// code as `node bin/mimir.js`, without a process start per call), with the
// environment variables given set for the length of the call. Calls must not
// overlap (process.env is shared).
import { Writable } from 'node:stream';
import { main } from '../../src/cli/main.ts';
import { Output } from '../../src/cli/output.ts';
import type { CliResult } from '../cli/run-cli.ts';

class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

export async function cli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const stdout = new Collect();
  const stderr = new Collect();
  try {
    const code = await main(args, new Output(stdout as unknown as NodeJS.WriteStream, stderr as unknown as NodeJS.WriteStream));
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
