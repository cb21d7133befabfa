// A password for local sign-in, never from the command line (where `ps` and the shell's history would keep it): the
// ACP_PASSWORD environment variable, else a prompt on the terminal that does not echo what is typed.

export const PASSWORD_VARIABLE = 'ACP_PASSWORD';

/** What the prompt needs of a terminal: process.stdin, or a stand-in in tests. */
export interface TerminalInput {
  readonly isTTY?: boolean;
  readonly isRaw: boolean;
  setRawMode(mode: boolean): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
}

export interface PasswordInput {
  env?: NodeJS.ProcessEnv;
  input?: TerminalInput;
  output?: NodeJS.WritableStream;
}

/** Reads one line from a terminal in raw mode, echoing nothing; Ctrl-C or Ctrl-D on an empty line cancel it. */
export function promptHidden(question: string, input: TerminalInput, output: NodeJS.WritableStream) {
  return new Promise<string>((resolve, reject) => {
    output.write(question);
    let typed = '';
    const wasRaw = input.isRaw;
    input.setRawMode(true);
    input.resume();
    const done = (err: Error | undefined) => {
      input.off('data', onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done(undefined);
        if (ch === '\u0003' || (ch === '\u0004' && !typed)) return done(new Error('cancelled'));
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    input.on('data', onData);
  });
}

/** The password for `email`: ACP_PASSWORD, else asked on the terminal; undefined when neither is possible. */
export async function readPassword(email: string, options: PasswordInput = {}): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const fromEnv = env[PASSWORD_VARIABLE];
  if (fromEnv) return fromEnv;
  const input = options.input ?? process.stdin;
  if (!input.isTTY) return undefined;
  return promptHidden(`Password for ${email}: `, input, options.output ?? process.stderr);
}
