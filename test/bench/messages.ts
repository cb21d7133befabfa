// The benches' threads (Worker) and child processes (ChildProcess) answer their parent by messages.
import type { EventEmitter } from 'node:events';

/**
 * A bench thread's or child process's next message, or its error; the listener of the one that did not come is
 * removed.
 */
export function nextMessage<T>(from: EventEmitter): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (err: Error) => {
      from.off('message', pass);
      reject(err);
    };
    const pass = (message: T) => {
      from.off('error', fail);
      resolve(message);
    };
    from.once('message', pass);
    from.once('error', fail);
  });
}
