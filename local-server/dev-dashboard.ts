// The dashboard's part of the browser-brokered agent sign-in, for local development only: a page at
// /dev/cli/login that signs the person in (POST /v1/auth/login), approves the pending request (POST
// /v1/auth/cli/approve) and sends the browser to the agent's loopback redirect. With `dashboard_url =
// "http://127.0.0.1:8080/dev"` (config/local.toml), `npm run agent -- login` works without a dashboard. The local
// server serves it; no Lambda and no route-table row does, so it never exists in AWS.

export const DEV_DASHBOARD_LOGIN_PATH = '/dev/cli/login';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A dashboard URL that is this server's own /dev page on loopback follows the port the server listens on: with
 * `npm start -- --port 9000` the browser must be sent to port 9000, not to the 8080 of config/local.toml. Any other
 * URL (a real dashboard) is left as it is, and so is every URL when the port is 0 (chosen by the system).
 */
export function devDashboardOnPort(dashboardUrl: string, port: number): string {
  if (port <= 0) return dashboardUrl;
  const url = new URL(dashboardUrl);
  const ownPage = url.pathname === '/dev' || url.pathname.startsWith('/dev/');
  if (!LOOPBACK_HOSTS.has(url.hostname) || !ownPage || url.port === String(port)) return dashboardUrl;
  url.port = String(port);
  return url.toString();
}

export const devDashboardLoginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in the agent (local development)</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}
label{display:block;margin:.75rem 0}input{width:100%;padding:.4rem;font:inherit}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}#status{color:#a00}</style></head>
<body>
<h1>Sign in the endpoint agent</h1>
<p>Local development page standing in for the dashboard. Signing in approves the agent's pending sign-in request.</p>
<form id="signin">
  <label>Email <input id="email" name="email" type="email" autocomplete="username" required></label>
  <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
  <button id="go" type="submit">Sign in and approve</button>
</form>
<p id="status" role="status"></p>
<script>
const status = document.getElementById('status');
document.getElementById('signin').addEventListener('submit', async (event) => {
  event.preventDefault();
  status.textContent = '';
  const request = new URLSearchParams(location.search).get('request');
  const post = (path, body, token) => fetch(path, { method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}) } })
    .then(async (res) => ({ ok: res.ok, body: await res.json() }));
  const login = await post('/v1/auth/login', {
    email: document.getElementById('email').value, password: document.getElementById('password').value });
  if (!login.ok) { status.textContent = login.body.message; return; }
  const approve = await post('/v1/auth/cli/approve', { request }, login.body.data.access_token);
  if (!approve.ok) { status.textContent = approve.body.message; return; }
  location.href = approve.body.data.redirect_to;
});
</script>
</body></html>
`;
