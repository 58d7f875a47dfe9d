// A real OpenID provider for tests (the npm package oidc-provider), plus a small protected API
// standing in for an upstream service such as GitHub. Nothing of getmcp is imported here.
//
//   node provider.mjs CONFIG.json
//
// CONFIG (JSON):
//   {"admin_token": "...", "access_token_ttl": 3600,
//    "clients": [{"client_id", "client_secret"?, "redirect_uris", "grant_types"?, ...}],
//    "users": [{"sub", "email", "name", "password", "groups"?, "items"?}]}
// Both servers listen on free loopback ports; once they do, one JSON line goes to stdout:
//   {"issuer": "http://127.0.0.1:P", "api": "http://127.0.0.1:Q"}
//
// Login and consent are a tiny page of our own (a username/password form, then "Allow"), so a
// headless browser signs in as any configured user and a wrong password is refused. Clients,
// users and grants can be changed while running through /admin/* (bearer admin_token).

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const defaultAccessTtl = config.access_token_ttl ?? 3600;
const users = new Map();
const esc = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// --- Storage: in memory, but enumerable, so a user's grants can be found and revoked. ---
const store = new Map(); // "Model:id" -> {payload, expiresAt}
const byGrant = new Map(); // grantId -> Set of keys
const byUid = new Map(); // session uid -> id

class Adapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    store.set(key, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : null });
    if (payload.grantId) {
      if (!byGrant.has(payload.grantId)) byGrant.set(payload.grantId, new Set());
      byGrant.get(payload.grantId).add(key);
    }
    if (this.model === 'Session' && payload.uid) byUid.set(payload.uid, id);
  }

  async find(id) {
    const entry = store.get(this.key(id));
    if (!entry) return undefined;
    if (entry.expiresAt && entry.expiresAt < Date.now()) {
      store.delete(this.key(id));
      return undefined;
    }
    return entry.payload;
  }

  async findByUid(uid) {
    return this.find(byUid.get(uid));
  }

  async findByUserCode() {
    return undefined;
  }

  async consume(id) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    store.delete(this.key(id));
  }

  async revokeByGrantId(grantId) {
    for (const key of byGrant.get(grantId) ?? []) store.delete(key);
    byGrant.delete(grantId);
  }
}

function clientMetadata(client) {
  const metadata = {
    client_id: client.client_id,
    redirect_uris: client.redirect_uris ?? [],
    grant_types: client.grant_types ?? ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: client.client_secret ? 'client_secret_basic' : 'none',
  };
  if (client.client_secret) metadata.client_secret = client.client_secret;
  if (client.token_endpoint_auth_method) {
    metadata.token_endpoint_auth_method = client.token_endpoint_auth_method;
  }
  if (client.access_token_ttl) metadata.access_token_ttl = client.access_token_ttl;
  return metadata;
}

async function addClient(client) {
  await new Adapter('Client').upsert(client.client_id, clientMetadata(client));
}

function addUser(user) {
  // An email names one user: a test adding it again (on a provider shared by many) replaces them.
  for (const [sub, other] of users) if (other.email === user.email) users.delete(sub);
  users.set(user.sub, {
    groups: [],
    items: [{ id: `${user.sub}-1`, title: `${user.name}'s first item` }],
    ...user,
  });
}

// --- The provider ---
function signingKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' };
}

function makeProvider(issuer) {
  return new Provider(issuer, {
    adapter: Adapter,
    jwks: { keys: [signingKey()] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    // As Okta, Entra ID and Keycloak do: the granted claims are in the ID token itself.
    conformIdTokenClaims: false,
    extraClientMetadata: { properties: ['access_token_ttl'] },
    ttl: {
      AccessToken: (ctx, token, client) => client?.metadata().access_token_ttl ?? defaultAccessTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Interaction: 3600,
      Session: 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    // Upstream services (GitHub and the like) give every client allowed the grant a refresh
    // token, whether or not it asked for offline_access.
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => false },
    features: {
      devInteractions: { enabled: false },
      introspection: { enabled: true },
      revocation: { enabled: true },
    },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, email: user.email, email_verified: true, name: user.name, groups: user.groups };
        },
      };
    },
  });
}

// --- Login and consent: our own small pages ---
function page(res, status, title, body) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><title>${esc(title)}</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`);
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function loginForm(uid, message = '') {
  return `${message ? `<p role="alert">${esc(message)}</p>` : ''}
<form method="post" action="/interaction/${esc(uid)}/login">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>`;
}

async function interaction(provider, req, res) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params, session } = details;
  const action = new URL(req.url, 'http://x').pathname.split('/')[3];
  if (req.method === 'GET') {
    if (prompt.name === 'login') return page(res, 200, 'Sign in', loginForm(uid));
    return page(res, 200, 'Authorize', `<p>${esc(params.client_id)} asks for ${esc(params.scope)}.</p>
<form method="post" action="/interaction/${esc(uid)}/confirm"><button type="submit" name="decision" value="allow">Allow</button></form>
<form method="post" action="/interaction/${esc(uid)}/abort"><button type="submit" name="decision" value="deny">Deny</button></form>`);
  }
  const form = new URLSearchParams(await readBody(req));
  if (action === 'login') {
    const user = [...users.values()].find(
      (u) => u.sub === form.get('username') || u.email === form.get('username'),
    );
    if (!user || user.password !== form.get('password')) {
      return page(res, 401, 'Sign in', loginForm(uid, 'Wrong username or password.'));
    }
    return provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
  }
  if (action === 'abort') {
    return provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied access.' }, { mergeWithLastSubmission: false });
  }
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
  let { grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

// --- Admin: change clients and users, revoke a user's grants ---
async function revokeUser(provider, sub) {
  let revoked = 0;
  for (const [key, entry] of [...store.entries()]) {
    if (key.startsWith('Grant:') && entry.payload.accountId === sub) {
      await new Adapter('Grant').revokeByGrantId(key.slice('Grant:'.length));
      store.delete(key);
      revoked += 1;
    }
  }
  // Their sessions too: the next authorization asks them to sign in again.
  for (const [key, entry] of [...store.entries()]) {
    if (key.startsWith('Session:') && entry.payload.accountId === sub) store.delete(key);
  }
  return revoked;
}

async function admin(provider, req, res) {
  const json = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.headers.authorization !== `Bearer ${config.admin_token}`) return json(401, { error: 'unauthorized' });
  const body = req.method === 'POST' ? JSON.parse((await readBody(req)) || '{}') : {};
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/admin/clients') {
    await addClient(body);
    return json(200, { client_id: body.client_id });
  }
  if (path === '/admin/users') {
    addUser(body);
    return json(200, { sub: body.sub });
  }
  if (path === '/admin/revoke') return json(200, { revoked: await revokeUser(provider, body.sub) });
  if (path === '/admin/grants') return json(200, grantCounts[body.client_id] ?? {});
  return json(404, { error: 'not_found' });
}

// --- The protected API: only this provider's live access tokens, only the caller's data ---
async function api(provider, req, res) {
  const json = (status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const refuse = () => json(401, { message: 'Bad credentials' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
  const match = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return refuse();
  // find() checks expiry; a revoked grant removed its tokens, and the grant is checked too.
  const token = await provider.AccessToken.find(match[1]);
  if (!token || !(await provider.Grant.find(token.grantId))) return refuse();
  const user = users.get(token.accountId);
  if (!user) return refuse();
  const path = new URL(req.url, 'http://x').pathname;
  if (req.method === 'GET' && path === '/me') {
    return json(200, { sub: user.sub, login: user.sub, email: user.email, name: user.name, groups: user.groups });
  }
  if (req.method === 'GET' && path === '/items') return json(200, user.items);
  return json(404, { message: 'Not Found' });
}

function listen(handler) {
  const server = http.createServer((req, res) => {
    handler(req, res).catch((error) => {
      const status = error instanceof errors.OIDCProviderError ? error.statusCode : 500;
      if (!res.headersSent) page(res, status, 'Error', `<p>${esc(error.message)}</p>`);
      else res.end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

let provider;
let callback;
const issuerServer = await listen(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path.startsWith('/interaction/')) return interaction(provider, req, res);
  if (path.startsWith('/admin/')) return admin(provider, req, res);
  return callback(req, res);
});
const issuer = `http://127.0.0.1:${issuerServer.address().port}`;
provider = makeProvider(issuer);
// Token endpoint grants per client and grant type, so a test can count the refreshes made.
const grantCounts = {};
provider.on('grant.success', (ctx) => {
  const client = ctx.oidc.client?.clientId ?? '';
  const type = ctx.oidc.params?.grant_type ?? '';
  grantCounts[client] = grantCounts[client] ?? {};
  grantCounts[client][type] = (grantCounts[client][type] ?? 0) + 1;
});
callback = provider.callback();
for (const client of config.clients ?? []) await addClient(client);
for (const user of config.users ?? []) addUser(user);
const apiServer = await listen((req, res) => api(provider, req, res));
process.stdout.write(`${JSON.stringify({ issuer, api: `http://127.0.0.1:${apiServer.address().port}` })}\n`);

const stop = () => {
  issuerServer.close();
  apiServer.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
