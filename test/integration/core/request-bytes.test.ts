// Bytes in are bytes stored, at the edges the fuzz does not reach (test/integration/core/fuzz.test.ts sends raw bytes
// that are not UTF-8 and other charsets to every route that takes a body):
// - the CLI sign-in's `state` travels back to the agent exactly as it was sent, or is refused (it came back with
//   U+FFFD in place of an escape that was not UTF-8);
// - the local gateway answers a body over its 10 MB bound with the documented 413 {error, message} on every kind of
//   route, with or without a Content-Length, where the connection was reset before anything was answered.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { driversUnderTest } from '#test/support/databases.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const DASHBOARD = 'http://dashboard.test';
const LOOPBACK = 'http://127.0.0.1:43123/callback';

for (const driver of driversUnderTest()) {
  describe(`the CLI sign-in's state on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: DASHBOARD });
      admin = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    const authorize = (rawState: string) => {
      const challenge = createHash('sha256').update(randomUUID()).digest('base64url');
      const rest = new URLSearchParams({
        redirect_uri: LOOPBACK,
        code_challenge: challenge,
        client_id: 'acp-agent-cli',
        code_challenge_method: 'S256',
      });
      return fetch(`${svc.url}/v1/auth/cli/authorize?state=${rawState}&${rest}`, { redirect: 'manual' });
    };

    test('a state that is not percent-encoded UTF-8 is 400 naming it; any other comes back to the agent as sent', async () => {
      for (const raw of ['%FF', 'ab%C3', '%ED%A0%80', '%ZZ']) {
        const res = await authorize(raw);
        assert.equal(res.status, 400, raw);
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(body.error, 'validation_failed');
        assert.match(body.message, /^query\.state: is not percent-encoded UTF-8/, raw);
      }
      for (const state of ['é😀\ufffd', 'a b+c&d=e', '\u{10ffff}\ufeff', '%FF as text']) {
        const res = await authorize(encodeURIComponent(state));
        assert.equal(res.status, 302, state);
        const request = new URL(String(res.headers.get('location'))).searchParams.get('request');
        const approved = await svc.call('POST', '/v1/auth/cli/approve', { token: admin, body: { request } });
        assert.equal(approved.status, 200, approved.text);
        const back = new URL((approved.body.data as { redirect_to: string }).redirect_to);
        assert.equal(back.searchParams.get('state'), state);
      }
    });
  });
}

/** A request over node:http with a body of `size` zero bytes, sent with a Content-Length or chunked. */
function sendLarge(
  url: string,
  method: string,
  path: string,
  size: number,
  framing: 'content-length' | 'chunked',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, url),
      {
        method,
        headers: {
          'content-type': 'application/json',
          // Said outright: node:http sends a GET's body unframed otherwise.
          ...(framing === 'content-length'
            ? { 'content-length': String(size) }
            : { 'transfer-encoding': 'chunked' }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const chunk = Buffer.alloc(1024 * 1024);
    for (let sent = 0; sent < size; sent += chunk.length)
      req.write(chunk.subarray(0, Math.min(chunk.length, size - sent)));
    req.end();
  });
}

describe('the local gateway’s bound on bodies', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService('pglite');
  });
  after(async () => svc?.dispose());

  test('over 10 MiB: the documented 413 {error, message} on every kind of route, whatever the framing; not a reset', async () => {
    const over = 10 * 1024 * 1024 + 1;
    for (const [method, path] of [
      ['POST', '/v1/admin/users'],
      ['POST', '/v1/devices/events'],
      ['GET', '/v1/healthcheck'],
      ['POST', '/v1/no/such/route'],
      ['GET', '/console/'],
    ] as const) {
      for (const framing of ['content-length', 'chunked'] as const) {
        const res = await sendLarge(svc.url, method, path, over, framing);
        assert.equal(res.status, 413, `${method} ${path} (${framing})`);
        assert.deepEqual(JSON.parse(res.text), {
          error: 'payload_too_large',
          message: 'The request body is larger than 10 MB.',
        });
      }
    }
    // At the bound it is the route's own answer.
    const at = await sendLarge(svc.url, 'GET', '/v1/healthcheck', 10 * 1024 * 1024, 'content-length');
    assert.equal(at.status, 200);
  });
});
