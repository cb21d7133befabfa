// The local console's URL, as dashboard_url, follows the port npm start listens on; any other dashboard URL is left
// alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consoleDashboardOnPort } from '#local-server/console.ts';

test("this server's own /console on loopback moves to the listening port", () => {
  assert.equal(
    consoleDashboardOnPort('http://127.0.0.1:8080/console', 9000),
    'http://127.0.0.1:9000/console',
  );
  assert.equal(
    consoleDashboardOnPort('http://localhost:8080/console/', 9000),
    'http://localhost:9000/console/',
  );
  assert.equal(consoleDashboardOnPort('http://[::1]:8080/console', 9000), 'http://[::1]:9000/console');
});

test('a real dashboard, the same port, or a port chosen by the system: unchanged', () => {
  assert.equal(
    consoleDashboardOnPort('https://dashboard.example.com/console', 9000),
    'https://dashboard.example.com/console',
  );
  assert.equal(consoleDashboardOnPort('http://127.0.0.1:3000/admin', 9000), 'http://127.0.0.1:3000/admin');
  assert.equal(
    consoleDashboardOnPort('http://127.0.0.1:3000/consoles', 9000),
    'http://127.0.0.1:3000/consoles',
  );
  assert.equal(
    consoleDashboardOnPort('http://127.0.0.1:8080/console', 8080),
    'http://127.0.0.1:8080/console',
  );
  assert.equal(consoleDashboardOnPort('http://127.0.0.1:8080/console', 0), 'http://127.0.0.1:8080/console');
});
