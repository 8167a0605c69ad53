// A real OpenID provider for the single sign-on tests: panva's certified oidc-provider, as it ships,
// with its development login and consent pages. Started by tests/core/sso/conftest.py, never deployed.
//
// The tests register their client through the provider's own dynamic client registration (POST /reg),
// since the redirect URI depends on the test server's port. Beside the provider, /_test/ lets a test
// say who may sign in with which claims (the provider's user directory) and read what the provider
// was sent:
//   PUT  /_test/users/<id>      body: the user's claims, e.g. {"email", "preferred_username", "groups"}
//   GET  /_test/authorizations  the query of every authorization request, oldest first
//   GET  /_test/grants          every token grant: its grant_type and whether a code_verifier came
//   POST /_test/reset           forget the users, authorizations and grants
// It prints one JSON line, {"issuer": "http://127.0.0.1:<port>"}, once it listens.

import http from 'node:http';

import Provider from 'oidc-provider';

const users = new Map();
const authorizations = [];
const grants = [];

function readJson(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      try {
        resolve(body ? JSON.parse(body) : {});
      } catch (error) {
        reject(error);
      }
    });
  });
}

function answer(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

async function testApi(req, res) {
  const url = new URL(req.url, 'http://test');
  const user = url.pathname.match(/^\/_test\/users\/([^/]+)$/);
  if (user && req.method === 'PUT') {
    users.set(decodeURIComponent(user[1]), await readJson(req));
    return answer(res, 200, { ok: true });
  }
  if (url.pathname === '/_test/authorizations' && req.method === 'GET') return answer(res, 200, authorizations);
  if (url.pathname === '/_test/grants' && req.method === 'GET') return answer(res, 200, grants);
  if (url.pathname === '/_test/reset' && req.method === 'POST') {
    users.clear();
    authorizations.length = 0;
    grants.length = 0;
    return answer(res, 200, { ok: true });
  }
  return answer(res, 404, { error: 'not_found' });
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    // Signed cookies need keys; these only ever protect a test's throw-away sessions.
    cookies: { keys: ['rebuild-tracker-tests-only'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['preferred_username', 'name', 'given_name', 'family_name'],
      groups: ['groups'],
    },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
    },
    // Every authorization request must carry a code_challenge (S256): a client that stopped sending
    // PKCE would fail here, at the real provider, not in an assertion about our own code.
    pkce: { methods: ['S256'], required: () => true },
    async findAccount(ctx, id) {
      const claims = users.get(id);
      if (!claims) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
    },
  });
  provider.use(async (ctx, next) => {
    if (ctx.path === '/auth' && ctx.method === 'GET') authorizations.push({ ...ctx.query });
    await next();
  });
  provider.on('grant.success', (ctx) => {
    grants.push({
      grant_type: ctx.oidc.params.grant_type,
      code_verifier: Boolean(ctx.oidc.params.code_verifier),
    });
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url.startsWith('/_test/')) {
      testApi(req, res).catch((error) => answer(res, 400, { error: String(error) }));
    } else {
      callback(req, res);
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
