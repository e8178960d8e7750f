// The API as Strapi's official client (@strapi/client) and qs see it, run
// by `node --test` against a running stack: cmd/local's TestLocalStack
// starts one and sets STAMPDUTY_API_URL and STAMPDUTY_TOKEN. Each test
// checks real values against what the API itself answers unfiltered, so a
// filter that does not filter or a sort that does not sort fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import qs from 'qs';
import { strapi, HTTPBadRequestError, HTTPNotFoundError } from '@strapi/client';

const base = process.env.STAMPDUTY_API_URL;
const token = process.env.STAMPDUTY_TOKEN;
if (!base || !token) {
  throw new Error('set STAMPDUTY_API_URL (e.g. http://127.0.0.1:3000) and STAMPDUTY_TOKEN');
}
const publicClient = strapi({ baseURL: `${base}/api` });
const client = strapi({ baseURL: `${base}/api`, auth: token });
const articles = publicClient.collection('stamp-duty-datas');
const orders = client.collection('live-orders');

const order = (name) => ({
  amount: 20, considerationPrice: 0, purpose: 'Affidavit', state: 'Karnataka', paidBy: 'First Party',
  firstPartyMobileNumber: '9876543210', firstPartyName: name, secondPartyName: 'Vikram Shah',
});

// The whole catalogue, in the API's default order (id ascending), read
// page by page the way the contract has always allowed.
async function catalogue() {
  const all = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${base}/api/stamp-duty-datas?${qs.stringify({ pagination: { page, pageSize: 100 } })}`);
    assert.equal(res.status, 200);
    const body = await res.json();
    all.push(...body.data);
    if (page >= body.meta.pagination.pageCount) return all;
  }
}

// An order created without the client (a plain body), for the tests that
// read orders.
async function createPlain(name) {
  const res = await fetch(`${base}/api/live-orders`, {
    method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(order(name)),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.orderId;
}

// The Strapi error envelope of an HTTPError the client threw.
async function envelope(err) {
  const body = await err.response.json();
  assert.equal(body.data, null);
  return body.error;
}

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

test('articles: find sorts and pages', async () => {
  const all = await catalogue();
  assert.ok(all.length > 5, `the sample catalogue has ${all.length} articles`);
  const want = [...all].sort((a, b) => cmp(b.purpose_name, a.purpose_name) || a.id - b.id);
  const page1 = await articles.find({ sort: ['purpose_name:desc'], pagination: { page: 1, pageSize: 4 } });
  const page2 = await articles.find({ sort: ['purpose_name:desc'], pagination: { page: 2, pageSize: 4 } });
  assert.deepEqual(page1.meta.pagination, { page: 1, pageSize: 4, pageCount: Math.ceil(all.length / 4), total: all.length });
  assert.deepEqual([...page1.data, ...page2.data].map((a) => a.id), want.slice(0, 8).map((a) => a.id));
});

test('articles: find filters with Strapi operators', async () => {
  const all = await catalogue();
  const karnataka = await articles.find({ filters: { state: { $eq: 'Karnataka' } }, sort: ['id:asc'] });
  const want = all.filter((a) => a.state === 'Karnataka');
  assert.ok(want.length > 0 && want.length < all.length);
  assert.deepEqual(karnataka.data.map((a) => a.id), want.map((a) => a.id));
  assert.equal(karnataka.meta.pagination.total, want.length);

  const either = await articles.find({
    filters: { $or: [{ purpose_name: { $containsi: 'DEED' } }, { fixed: { $null: true } }] },
    sort: ['id:asc'], pagination: { pageSize: 100 },
  });
  const wantEither = all.filter((a) => a.purpose_name.toLowerCase().includes('deed') || a.fixed === null);
  assert.ok(wantEither.length > 0 && wantEither.length < all.length);
  assert.deepEqual(either.data.map((a) => a.id), wantEither.map((a) => a.id));

  const between = await articles.find({ filters: { min: { $between: [100, 1000] } }, pagination: { pageSize: 100 } });
  assert.deepEqual(between.data.map((a) => a.id), all.filter((a) => a.min >= 100 && a.min <= 1000).map((a) => a.id));
});

test('articles: fields selects, populate=* changes nothing', async () => {
  const plain = await articles.find({ pagination: { pageSize: 100 } });
  const populated = await articles.find({ populate: '*', pagination: { pageSize: 100 } });
  assert.deepEqual(populated, plain);
  const some = await articles.find({ fields: ['purpose_name', 'state'], pagination: { pageSize: 100 } });
  assert.deepEqual(some.data, plain.data.map(({ id, documentId, purpose_name, state }) => ({ id, documentId, purpose_name, state })));
});

test('articles: offset pagination and withCount, as qs writes them', async () => {
  const all = await catalogue();
  const res = await publicClient.fetch(`/stamp-duty-datas?${qs.stringify({ pagination: { start: 2, limit: 3 } }, { encodeValuesOnly: true })}`);
  const body = await res.json();
  assert.deepEqual(body.meta.pagination, { start: 2, limit: 3, total: all.length });
  assert.deepEqual(body.data.map((a) => a.id), all.slice(2, 5).map((a) => a.id));
  const uncounted = await articles.find({ pagination: { page: 1, pageSize: 2, withCount: false } });
  assert.deepEqual(uncounted.meta.pagination, { page: 1, pageSize: 2 });
});

test('orders: findOne reads an order', async () => {
  const id = await createPlain('Findone Party');
  const { data, meta } = await orders.findOne(id);
  assert.deepEqual(meta, {});
  assert.equal(data.documentId, id);
  assert.equal(data.stamp_duty.first_party_name, 'Findone Party');
  assert.equal(data.live_order_fulfillments[0].order_status, 'Pending');
});

test('orders: create through the client, then findOne', async () => {
  const created = await orders.create(order('Client Party'));
  assert.equal(created.message, 'Successfully created the order!');
  assert.match(created.orderId, /^[a-z][0-9a-z]{23}$/);
  const { data } = await orders.findOne(created.orderId);
  assert.equal(data.stamp_duty.first_party_name, 'Client Party');
  assert.equal(data.stamp_duty.amount, 20);
});

// Karnataka's conveyance, a schedule of the local catalogue (duty-rules.md
// KA-SALE-03): 5% of the higher value, additional duty and cess on it.
const saleInputs = { considerationPrice: 4000000, marketValue: 4500001, locationClass: 'urban' };

test('quotes: inputs and instrumentDate give the explained duty, its lines adding up to the total', async () => {
  const res = await publicClient.fetch(`/stamp-duty-quotes?${qs.stringify({ purpose: 'Sale Deed', state: 'Karnataka', ...saleInputs, instrumentDate: '2025-09-01' })}`);
  const { data } = await res.json();
  assert.equal(data.rule, 'schedule');
  assert.equal(data.amount, 252001);
  assert.deepEqual(data.duty.lines.map((l) => [l.id, l.amount]),
    [['duty', '225000.05'], ['additional_urban', '4500.01'], ['cess', '22500.01'], ['rounding', '0.93']]);
  const paise = data.duty.lines.reduce((s, l) => s + BigInt(l.amount.replace('.', '')), 0n);
  assert.equal(paise, BigInt(data.duty.total.replace('.', '')));
  assert.match(data.duty.rule.hash, /^sha256:[0-9a-f]{64}$/);
});

test('quotes: every failing input is named at once', async () => {
  const err = await thrown(publicClient.fetch(`/stamp-duty-quotes?${qs.stringify({ purpose: 'Sale Deed', state: 'Karnataka', considerationPrice: 4000000, locationClass: 'metro' })}`));
  assert.ok(err instanceof HTTPBadRequestError);
  const e = await envelope(err);
  assert.deepEqual(e.details.errors.map((x) => x.path), [['marketValue'], ['locationClass']]);
  assert.match(e.details.dutyRule.hash, /^sha256:/);
});

test('orders: create with the rule inputs and the dutyRule of a quote, without an amount; findOne keeps the duty and the rule', async () => {
  const res = await publicClient.fetch(`/stamp-duty-quotes?${qs.stringify({ purpose: 'Sale Deed', state: 'Karnataka', ...saleInputs })}`);
  const quote = (await res.json()).data;
  const { amount, considerationPrice, ...rest } = order('Schedule Party');
  const created = await orders.create({ ...rest, purpose: 'Sale Deed', state: 'Karnataka', ...saleInputs, dutyRule: quote.duty.rule.hash });
  const { data } = await orders.findOne(created.orderId);
  assert.equal(data.stamp_duty.amount, 252001);
  assert.equal(data.stamp_duty.duty.rule.hash, quote.duty.rule.hash);
  assert.equal(data.stamp_duty.duty.total, '252001.00');
  assert.equal(data.stamp_duty.duty_rule_snapshot.citation.text, quote.duty.rule.citation.text);
  const stale = await thrown(orders.create({ ...rest, purpose: 'Sale Deed', state: 'Karnataka', ...saleInputs, dutyRule: `sha256:${'0'.repeat(64)}` }));
  assert.equal(stale.response.status, 409);
});

test('orders: create with a quantity, one fulfillment per paper, then findOne', async () => {
  const created = await orders.create({ ...order('Papers Party'), quantity: 3 });
  const { data } = await orders.findOne(created.orderId);
  assert.equal(data.stamp_duty.quantity, 3);
  assert.equal(data.stamp_duty.amount, 20);
  assert.equal(data.stamp_duty.total_amount, 60);
  assert.equal(data.live_order_fulfillments.length, 3);
  assert.equal(new Set(data.live_order_fulfillments.map((f) => f.documentId)).size, 3);
  assert.ok(data.live_order_fulfillments.every((f) => f.order_status === 'Pending'));
});

test('orders: delete cancels the order, which find and findOne still show with cancelledAt', async () => {
  const created = await orders.create(order('Cancelled Party'));
  const before = (await orders.findOne(created.orderId)).data;
  assert.equal(before.cancelledAt, null);
  assert.equal(before.cancellation, null);
  // Strapi v5 answers a delete 204 without a body; the client resolves.
  assert.equal(await orders.delete(created.orderId), undefined);
  const { data } = await orders.findOne(created.orderId);
  assert.match(data.cancelledAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.deepEqual(data.cancellation, { by: 'caller', reason: null });
  assert.equal(data.updatedAt, data.cancelledAt);
  assert.deepEqual(data.live_order_fulfillments, before.live_order_fulfillments);
  const found = await orders.find({ filters: { documentId: { $eq: created.orderId } } });
  assert.deepEqual(found.data.map((o) => [o.documentId, o.cancelledAt]), [[created.orderId, data.cancelledAt]]);
  // A second delete resolves as the first did and changes nothing.
  assert.equal(await orders.delete(created.orderId), undefined);
  assert.deepEqual((await orders.findOne(created.orderId)).data, data);
});

test('orders: find pages newest first and filters by documentId', async () => {
  const older = await createPlain('Older Party');
  const newer = await createPlain('Newer Party');
  const page = await orders.find({ pagination: { page: 1, pageSize: 2 } });
  assert.deepEqual(page.data.map((o) => o.documentId), [newer, older]);
  assert.equal(page.pagination.page, 1);
  assert.equal(page.pagination.pageSize, 2);
  assert.ok(page.pagination.total >= 2);
  const both = await orders.find({ filters: { documentId: { $in: [older, newer] } } });
  assert.deepEqual(both.data.map((o) => o.documentId).sort(), [older, newer].sort());
  assert.equal(both.pagination.total, 2);
  const one = await orders.find({ filters: { documentId: { $eq: older } } });
  assert.deepEqual(one.data.map((o) => o.documentId), [older]);
});

// The error a request threw (the test fails if it did not throw).
async function thrown(request) {
  try {
    await request;
  } catch (err) {
    return err;
  }
  assert.fail('the request succeeded, want an error');
}

test('errors: a 400 is HTTPBadRequestError with the envelope', async () => {
  const err = await thrown(articles.find({ sort: ['price:asc'] }));
  assert.ok(err instanceof HTTPBadRequestError, `got ${err}`);
  assert.equal(err.response.status, 400);
  const e = await envelope(err);
  assert.deepEqual([e.status, e.name], [400, 'ValidationError']);
  assert.match(e.message, /price/);
});

test('errors: a filter on an unknown field is 400 Invalid key', async () => {
  const err = await thrown(articles.find({ filters: { price: { $eq: 1 } } }));
  assert.ok(err instanceof HTTPBadRequestError, `got ${err}`);
  assert.equal((await envelope(err)).message, 'Invalid key price');
});

test('errors: a 404 is HTTPNotFoundError with the envelope', async () => {
  const err = await thrown(orders.findOne('k3v9xq2m7p4r8t1w5y6z0abc'));
  assert.ok(err instanceof HTTPNotFoundError, `got ${err}`);
  const e = await envelope(err);
  assert.deepEqual([e.status, e.name], [404, 'NotFoundError']);
  assert.equal(e.message, 'Order with the documentId: k3v9xq2m7p4r8t1w5y6z0abc cannot be found.');
});

test('errors: a delete of an order the caller does not have is HTTPNotFoundError with the envelope', async () => {
  const err = await thrown(orders.delete('k3v9xq2m7p4r8t1w5y6z0abc'));
  assert.ok(err instanceof HTTPNotFoundError, String(err));
  const e = await envelope(err);
  assert.equal(e.status, 404);
  assert.equal(e.message, 'Order with the documentId: k3v9xq2m7p4r8t1w5y6z0abc cannot be found.');
});

test('errors: a path the API does not have is HTTPNotFoundError with the envelope', async () => {
  const err = await thrown(client.collection('no-such-things').find());
  assert.ok(err instanceof HTTPNotFoundError, `got ${err}`);
  const e = await envelope(err);
  assert.deepEqual([e.status, e.name, e.message], [404, 'NotFoundError', 'Not Found']);
});

test('account: the client reads the account and a page of its entries, which agree', async () => {
  const res = await client.fetch('/account');
  assert.equal(res.status, 200);
  const { data } = await res.json();
  assert.equal(data.currency, 'INR');
  assert.match(data.balance, /^-?\d+\.\d{2}$/);
  assert.match(data.held, /^\d+\.\d{2}$/);
  const page = await (await client.fetch(`/account/entries?${qs.stringify({ pagination: { pageSize: 1 } })}`)).json();
  assert.equal(page.meta.pagination.pageSize, 1);
  if (page.data.length > 0) { // the newest entry's after-values are the account's
    assert.equal(page.data[0].balanceAfter, data.balance);
    assert.equal(page.data[0].heldAfter, data.held);
  }
});
