// The export benches' receiver: an HTTP server that takes every request, drains its body and answers 200, in a
// thread of its own (its own event loop, as a collector is another process), so that the sender's figures are the
// sender's. Decoding what arrives is the tests' job (test/integration/exports/).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { nextMessage } from './messages.ts';

interface ReceiverData {
  receiver: true;
}
/** What the receiver took: body bytes, requests, and connections opened to it. */
export interface Received {
  bytes: number;
  requests: number;
  connections: number;
}
type FromReceiver = { url: string } | Received;

export interface DrainReceiver {
  url: string;
  /** What it took so far. */
  received(): Promise<Received>;
  close(): Promise<void>;
}

/** Starts the receiver's thread; `url` is its base (http://127.0.0.1:port). */
export async function startDrainReceiver(): Promise<DrainReceiver> {
  const data: ReceiverData = { receiver: true };
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  const reply = () => nextMessage<FromReceiver>(worker);
  const ready = await reply();
  if (!('url' in ready)) throw new Error('the receiver did not start');
  return {
    url: ready.url,
    async received() {
      const answer = reply();
      worker.postMessage('received');
      const got = await answer;
      if ('url' in got) throw new Error('the receiver answered out of turn');
      return got;
    },
    async close() {
      await worker.terminate();
    },
  };
}

function receiver(port: NonNullable<typeof parentPort>): void {
  const received: Received = { bytes: 0, requests: 0, connections: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      received.bytes += chunk.length;
    });
    req.on('end', () => {
      received.requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0}');
    });
  });
  server.on('connection', () => {
    received.connections++;
  });
  server.listen(0, '127.0.0.1', () => {
    port.postMessage({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    } satisfies FromReceiver);
  });
  port.on('message', () => port.postMessage({ ...received } satisfies FromReceiver));
}

if (!isMainThread && parentPort && (workerData as Partial<ReceiverData> | null)?.receiver)
  receiver(parentPort);
