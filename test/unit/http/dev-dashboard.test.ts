// The local sign-in page's URL follows the port npm start listens on; any other dashboard URL is left alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { devDashboardOnPort } from '#local-server/dev-dashboard.ts';

test("this server's own /dev page on loopback moves to the listening port", () => {
  assert.equal(devDashboardOnPort('http://127.0.0.1:8080/dev', 9000), 'http://127.0.0.1:9000/dev');
  assert.equal(devDashboardOnPort('http://localhost:8080/dev/', 9000), 'http://localhost:9000/dev/');
  assert.equal(devDashboardOnPort('http://[::1]:8080/dev', 9000), 'http://[::1]:9000/dev');
});

test('a real dashboard, the same port, or a port chosen by the system: unchanged', () => {
  assert.equal(
    devDashboardOnPort('https://dashboard.example.com/dev', 9000),
    'https://dashboard.example.com/dev',
  );
  assert.equal(devDashboardOnPort('http://127.0.0.1:3000/admin', 9000), 'http://127.0.0.1:3000/admin');
  assert.equal(
    devDashboardOnPort('http://127.0.0.1:3000/developer', 9000),
    'http://127.0.0.1:3000/developer',
  );
  assert.equal(devDashboardOnPort('http://127.0.0.1:8080/dev', 8080), 'http://127.0.0.1:8080/dev');
  assert.equal(devDashboardOnPort('http://127.0.0.1:8080/dev', 0), 'http://127.0.0.1:8080/dev');
});
