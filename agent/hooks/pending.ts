// Calls that have started and not yet ended: one small file per call, so that parallel hooks (a parallel pair of
// tool calls, several clients) never write the same file. A file is written whole then renamed into place, and
// taken by renaming it away first: of two hooks taking the same call, exactly one gets it.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { digest } from './payload.ts';
import { randomBytes } from './random.ts';
import type { Decision } from './types.ts';

export interface PendingCall {
  startedAt: number;
  server: string;
  tool: string;
  sessionId?: string;
  model?: string;
  actorEmail?: string;
  input?: unknown;
  /** The policy's allow at the start (its rule, an audit match), reported with the call's end. */
  decision?: Decision;
}

const NAME = /^([0-9a-z]{16})\.(\d{15})\.[0-9a-f]{8}\.json$/;

export class PendingCalls {
  readonly dir: string;
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'hooks', 'pending');
  }

  put(clientId: string, pairKey: string, call: PendingCall): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const name = `${digest(`${clientId}\0${pairKey}`)}.${String(call.startedAt).padStart(15, '0')}.${randomBytes(4).toString('hex')}.json`;
    const tmp = join(this.dir, `.${name}.tmp`);
    writeFileSync(tmp, JSON.stringify(call), { mode: 0o600 });
    renameSync(tmp, join(this.dir, name));
  }

  /** The oldest pending call with this key (a key without the client's call id may match several), or undefined. */
  take(clientId: string, pairKey: string): PendingCall | undefined {
    const prefix = `${digest(`${clientId}\0${pairKey}`)}.`;
    for (const name of this.names().filter((n) => n.startsWith(prefix))) {
      const call = this.claim(name);
      if (call) return call;
    }
    return undefined;
  }

  /** Takes the calls that started before `before`: their end never came (refused, cancelled, the client died). */
  takeExpired(before: number): PendingCall[] {
    const expired: PendingCall[] = [];
    for (const name of this.names()) {
      if (Number(NAME.exec(name)?.[2]) >= before) continue;
      const call = this.claim(name);
      if (call) expired.push(call);
    }
    return expired;
  }

  private names(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((name) => NAME.test(name))
        .sort((a, b) => (a.slice(17) < b.slice(17) ? -1 : 1));
    } catch {
      return [];
    }
  }

  private claim(name: string): PendingCall | undefined {
    const taken = join(this.dir, `.${name}.${process.pid}.taken`);
    try {
      renameSync(join(this.dir, name), taken);
    } catch {
      return undefined;
    }
    try {
      return JSON.parse(readFileSync(taken, 'utf8')) as PendingCall;
    } catch {
      return undefined;
    } finally {
      try {
        unlinkSync(taken);
      } catch {}
    }
  }
}

/** What a session's start said about it (the model), for the calls made in it. */
export class SessionNotes {
  readonly dir: string;
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'hooks', 'sessions');
  }

  private path(clientId: string, sessionId: string): string {
    return join(this.dir, `${digest(`${clientId}\0${sessionId}`)}.json`);
  }

  /** Saves the note, and forgets those of sessions that started more than 30 days ago. */
  save(clientId: string, sessionId: string, note: { model?: string }): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const old = Date.now() - 30 * 86_400_000;
    for (const name of readdirSync(this.dir)) {
      try {
        if (statSync(join(this.dir, name)).mtimeMs < old) unlinkSync(join(this.dir, name));
      } catch {}
    }
    const tmp = `${this.path(clientId, sessionId)}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ ...note, savedAt: Date.now() }), { mode: 0o600 });
    renameSync(tmp, this.path(clientId, sessionId));
  }

  model(clientId: string, sessionId: string): string | undefined {
    try {
      const note = JSON.parse(readFileSync(this.path(clientId, sessionId), 'utf8')) as { model?: unknown };
      return typeof note.model === 'string' ? note.model : undefined;
    } catch {
      return undefined;
    }
  }
}
