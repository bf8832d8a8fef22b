// Fidelity check of kinetic's fake GCS (tests/fakes/fake_gcs.cpp) with Google's own Node client.
// Usage: node gcs_roundtrip.mjs http://127.0.0.1:PORT
// Exits 0 when every step matched, 1 with a message on the first mismatch.
import {Storage} from '@google-cloud/storage';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const endpoint = process.argv[2] || process.env.FAKE_GCS_URL;
if (!endpoint) {
  console.error('usage: node gcs_roundtrip.mjs http://127.0.0.1:PORT');
  process.exit(2);
}

const storage = new Storage({
  apiEndpoint: endpoint,
  projectId: 'fake-project',
  // A custom endpoint skips auth by default; keep it explicit so no credentials are looked up.
  useAuthWithCustomEndpoint: false,
  retryOptions: {autoRetry: true, maxRetries: 3, retryDelayMultiplier: 1.1, totalTimeout: 60},
});

let step = '';
function check(cond, msg) {
  if (!cond) throw new Error(`${step}: ${msg}`);
}
function sameBytes(a, b, what) {
  check(Buffer.compare(a, b) === 0, `${what}: ${a.length} bytes differ from expected ${b.length}`);
}

async function expectStatus(promise, code, what) {
  try {
    await promise;
  } catch (err) {
    // Session-start failures of resumable uploads surface as gaxios errors without `code`.
    const got = err.code ?? err.response?.status;
    check(got === code, `${what}: expected ${code}, got ${got} (${err.message})`);
    return err;
  }
  throw new Error(`${step}: ${what}: expected HTTP ${code}, but it succeeded`);
}

async function main() {
  const bucketName = `roundtrip-${process.pid}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gcs-roundtrip-'));

  step = 'createBucket';
  const [bucket] = await storage.createBucket(bucketName, {
    location: 'us-central1',
    lifecycle: {rule: [{action: {type: 'Delete'}, condition: {age: 7, matchesPrefix: ['src/']}}]},
  });
  const [bmeta] = await bucket.getMetadata();
  check(bmeta.name === bucketName, `bucket name ${bmeta.name}`);
  check(bmeta.location === 'US-CENTRAL1', `bucket location ${bmeta.location}`);
  check(bmeta.lifecycle?.rule?.[0]?.condition?.age === 7, 'lifecycle rule kept');
  await expectStatus(storage.createBucket(bucketName), 409, 'createBucket twice');
  const [exists] = await bucket.exists();
  check(exists, 'bucket.exists');
  check(/^[0-9]+$/.test(bmeta.projectNumber ?? ''), `projectNumber ${bmeta.projectNumber}`);

  step = 'bucket IAM (getPolicy, setPolicy)';
  const [policy] = await bucket.iam.getPolicy({requestedPolicyVersion: 3});
  check(policy.kind === 'storage#policy', `policy kind ${policy.kind}`);
  check(policy.resourceId === `projects/_/buckets/${bucketName}`, `resourceId ${policy.resourceId}`);
  check(typeof policy.etag === 'string' && policy.etag.length > 0, `etag ${policy.etag}`);
  const owners = policy.bindings.find(b => b.role === 'roles/storage.legacyBucketOwner');
  check(
    JSON.stringify(owners?.members) === '["projectEditor:fake-project","projectOwner:fake-project"]',
    `legacyBucketOwner ${JSON.stringify(owners)}`,
  );
  // What `kinetic up` grants: the pods' Kubernetes service account, through Workload Identity.
  const ksa =
    `principal://iam.googleapis.com/projects/${bmeta.projectNumber}/locations/global/` +
    'workloadIdentityPools/fake-project.svc.id.goog/subject/ns/default/sa/default';
  const [updated] = await bucket.iam.setPolicy({
    ...policy,
    bindings: [...policy.bindings, {role: 'roles/storage.objectUser', members: [ksa]}],
  });
  check(updated.etag !== policy.etag, `etag unchanged by setPolicy (${updated.etag})`);
  const granted = updated.bindings.find(b => b.role === 'roles/storage.objectUser');
  check(JSON.stringify(granted?.members) === JSON.stringify([ksa]), `set ${JSON.stringify(granted)}`);
  const [reread] = await bucket.iam.getPolicy();
  check(JSON.stringify(reread) === JSON.stringify(updated), 'getPolicy after setPolicy differs');
  // The raw JSON kinetic's client parses is the same policy.
  const raw = await (await fetch(`${endpoint}/storage/v1/b/${bucketName}/iam`)).json();
  check(JSON.stringify(raw) === JSON.stringify(updated), `raw policy ${JSON.stringify(raw)}`);
  await expectStatus(bucket.iam.setPolicy(policy), 412, 'setPolicy with a stale etag');
  const ci = await (await fetch(`${endpoint}/_fake/counters`)).json();
  check(ci['buckets.getIamPolicy'] === 3, `getIamPolicy count ${ci['buckets.getIamPolicy']}`);
  check(ci['buckets.setIamPolicy'] === 2, `setIamPolicy count ${ci['buckets.setIamPolicy']}`);

  step = 'upload small (resumable:false)';
  const small = Buffer.from('hello from @google-cloud/storage\n');
  const smallPath = path.join(tmp, 'small.txt');
  fs.writeFileSync(smallPath, small);
  const [smallFile] = await bucket.upload(smallPath, {
    destination: 'src/small.txt',
    resumable: false,
    validation: 'crc32c',
    metadata: {contentType: 'text/plain', metadata: {origin: 'roundtrip'}},
  });
  check(smallFile.metadata.size === String(small.length), `size ${smallFile.metadata.size}`);
  check(smallFile.metadata.contentType === 'text/plain', 'contentType kept');
  check(smallFile.metadata.metadata?.origin === 'roundtrip', 'custom metadata kept');
  const md5 = crypto.createHash('md5').update(small).digest('base64');
  check(smallFile.metadata.md5Hash === md5, `md5Hash ${smallFile.metadata.md5Hash} != ${md5}`);

  step = 'upload 1.5 MiB (resumable, chunkSize 256 KiB)';
  const big = crypto.randomBytes(1536 * 1024 + 123);
  const bigPath = path.join(tmp, 'big.bin');
  fs.writeFileSync(bigPath, big);
  const [bigFile] = await bucket.upload(bigPath, {
    destination: 'src/dir/big.bin',
    resumable: true,
    chunkSize: 256 * 1024,
    validation: 'crc32c',
    metadata: {contentType: 'application/octet-stream'},
  });
  // The Node client turns `size` into a Number after resumable uploads (the fake sends a string).
  check(String(bigFile.metadata.size) === String(big.length), `size ${bigFile.metadata.size}`);

  const counters = async () => (await fetch(`${endpoint}/_fake/counters`)).json();
  const c1 = await counters();
  check(c1['upload.resumable.start'] === 1, `resumable sessions: ${c1['upload.resumable.start']}`);
  check(c1['upload.resumable.put'] === 7, `expected 7 chunk PUTs, got ${c1['upload.resumable.put']}`);

  step = 'upload 1.5 MiB (resumable, single request)';
  await bucket.upload(bigPath, {destination: 'src/dir/big2.bin', resumable: true, validation: 'md5'});

  step = 'download both';
  const [smallBack] = await bucket.file('src/small.txt').download({validation: 'crc32c'});
  sameBytes(smallBack, small, 'small');
  const [bigBack] = await bucket.file('src/dir/big.bin').download({validation: 'md5'});
  sameBytes(bigBack, big, 'big (chunked)');
  const [big2Back] = await bucket.file('src/dir/big2.bin').download({validation: 'crc32c'});
  sameBytes(big2Back, big, 'big (single request)');

  step = 'ranged download';
  const [part] = await bucket.file('src/dir/big.bin').download({start: 1000, end: 300000});
  sameBytes(part, big.subarray(1000, 300001), 'range 1000-300000');
  const [tail] = await bucket.file('src/small.txt').download({start: 6});
  sameBytes(tail, small.subarray(6), 'range 6-');

  step = 'download validation detects corruption';
  for (const validation of ['crc32c', 'md5']) {
    await fetch(`${endpoint}/_fake/corrupt-next-download`, {method: 'POST'});
    try {
      await bucket.file('src/dir/big.bin').download({validation});
      throw new Error(`${step}: ${validation}: corrupted download was accepted`);
    } catch (e) {
      check(e.code === 'CONTENT_DOWNLOAD_MISMATCH', `${validation}: got ${e.code} ${e.message}`);
    }
  }

  step = 'server-side upload validation';
  const corruptPath = path.join(tmp, 'corrupt.txt');
  fs.writeFileSync(corruptPath, 'payload');
  await expectStatus(
    bucket.upload(corruptPath, {
      destination: 'corrupt.txt',
      resumable: false,
      validation: false,
      metadata: {crc32c: 'AAAAAA=='},
    }),
    400,
    'upload with wrong crc32c',
  );

  step = 'getFiles (prefix, delimiter, pagination)';
  for (let i = 0; i < 5; ++i) {
    await bucket.file(`list/item-${i}.txt`).save(`item ${i}`, {resumable: false});
  }
  await bucket.file('list/sub/a.txt').save('a', {resumable: false});
  await bucket.file('list/sub2/b.txt').save('b', {resumable: false});
  const [all] = await bucket.getFiles({prefix: 'list/'});
  check(all.length === 7, `prefix list found ${all.length} files`);
  const names = [];
  const prefixes = [];
  let query = {prefix: 'list/', delimiter: '/', maxResults: 2, autoPaginate: false};
  let pages = 0;
  while (query) {
    const [files, next, resp] = await bucket.getFiles(query);
    ++pages;
    names.push(...files.map(f => f.name));
    prefixes.push(...(resp.prefixes || []));
    check(files.length + (resp.prefixes || []).length <= 2, 'page larger than maxResults');
    query = next;
  }
  check(pages === 4, `expected 4 pages, got ${pages}`);
  check(
    JSON.stringify(names) === JSON.stringify([0, 1, 2, 3, 4].map(i => `list/item-${i}.txt`)),
    `names ${JSON.stringify(names)}`,
  );
  check(JSON.stringify(prefixes) === '["list/sub/","list/sub2/"]', `prefixes ${prefixes}`);
  const [auto] = await bucket.getFiles({prefix: 'list/', maxResults: 3});
  check(auto.length === 3, `maxResults with autoPaginate gave ${auto.length}`);

  step = 'file.exists';
  check((await bucket.file('src/small.txt').exists())[0] === true, 'existing object');
  check((await bucket.file('nope.txt').exists())[0] === false, 'missing object');
  await expectStatus(bucket.file('nope.txt').download(), 404, 'download missing');

  step = 'preconditions';
  const err = await expectStatus(
    bucket.file('src/small.txt').save('again', {resumable: false, preconditionOpts: {ifGenerationMatch: 0}}),
    412,
    'ifGenerationMatch:0 on existing (multipart)',
  );
  check(/pre-conditions/.test(err.message), `412 message: ${err.message}`);
  await expectStatus(
    bucket.upload(bigPath, {destination: 'src/dir/big.bin', resumable: true, preconditionOpts: {ifGenerationMatch: 0}}),
    412,
    'ifGenerationMatch:0 on existing (resumable)',
  );
  const gen = Number(smallFile.metadata.generation);
  await bucket.file('src/small.txt').save('replaced', {resumable: false, preconditionOpts: {ifGenerationMatch: gen}});
  const [replaced] = await bucket.file('src/small.txt').download();
  check(replaced.toString() === 'replaced', 'ifGenerationMatch=current generation succeeds');

  step = 'combine';
  // objects.compose as kinetic's bootstrap uses it for a job's log (docs/run-record.md).
  const pieces = [];
  for (let i = 0; i < 33; i++) {
    const f = bucket.file(`compose/${String(i).padStart(6, '0')}`);
    await f.save(`line ${i}\n`, {resumable: false, contentType: 'text/plain'});
    pieces.push(f);
  }
  const whole = pieces.map((_, i) => `line ${i}\n`).join('');
  await expectStatus(bucket.combine(pieces, 'compose/too-many'), 400, '33 sources');
  const tooMany = await bucket.combine(pieces, 'compose/too-many').catch(e => e);
  check(/exceeds the maximum \(32\)/.test(tooMany.message), `33 sources: ${tooMany.message}`);
  const composed = bucket.file('compose/composed');
  composed.metadata.contentType = 'text/plain';
  // combine answers the destination File and the API's object resource.
  const [, first] = await bucket.combine(pieces.slice(0, 31), composed, {ifGenerationMatch: 0});
  check(first.componentCount === 31, `componentCount ${first.componentCount}`);
  check(first.md5Hash === undefined, `a composite has no md5Hash (${first.md5Hash})`);
  check(first.contentType === 'text/plain', `contentType ${first.contentType}`);
  check(typeof first.crc32c === 'string', 'a composite has a crc32c');
  await expectStatus(bucket.combine(pieces.slice(31), composed, {ifGenerationMatch: 0}), 412,
    'ifGenerationMatch:0 on an existing destination');
  const gen1 = Number(first.generation);
  const [, second] = await bucket.combine([bucket.file('compose/composed', {generation: gen1}),
    ...pieces.slice(31)], composed, {ifGenerationMatch: gen1});
  check(second.componentCount === 33, `componentCount ${second.componentCount}`);
  const [read] = await composed.getMetadata();
  check(read.componentCount === 33 && read.md5Hash === undefined, `objects.get of a composite`);
  const [joined] = await composed.download();
  check(joined.toString() === whole, 'the composite is the concatenation of its sources');
  const [end] = await composed.download({start: whole.length - 8});
  check(end.toString() === whole.slice(-8), `ranged read of a composite: ${end}`);
  await expectStatus(bucket.combine([bucket.file('compose/composed', {generation: gen1}), pieces[0]],
    'compose/stale'), 404, 'a source of another generation');
  await expectStatus(bucket.combine([bucket.file('compose/none'), pieces[0]], 'compose/missing'),
    404, 'a missing source');
  // The destination resource's custom metadata (what the bootstrap counts parts with).
  const [withMeta] = await composed.request({method: 'POST', uri: '/compose', json: {
    destination: {contentType: 'text/plain', metadata: {parts: '33'}},
    sourceObjects: [{name: 'compose/composed'}]}});
  check(withMeta.metadata?.parts === '33', `custom metadata ${JSON.stringify(withMeta.metadata)}`);
  check(withMeta.componentCount === 33, `recomposed componentCount ${withMeta.componentCount}`);
  await bucket.deleteFiles({prefix: 'compose/', force: true});

  step = 'delete';
  await bucket.file('src/small.txt').delete();
  check((await bucket.file('src/small.txt').exists())[0] === false, 'deleted object gone');
  await expectStatus(bucket.file('src/small.txt').delete(), 404, 'delete twice');
  await expectStatus(bucket.delete(), 409, 'delete non-empty bucket');
  await bucket.deleteFiles({force: true});
  await bucket.delete();
  check((await bucket.exists())[0] === false, 'bucket deleted');

  fs.rmSync(tmp, {recursive: true, force: true});
  console.log('gcs_roundtrip: all checks passed');
}

main().then(
  // Exit now rather than wait for pooled keep-alive sockets to time out.
  () => process.exit(0),
  err => {
    console.error(`gcs_roundtrip FAILED: ${err.stack || err}`);
    process.exit(1);
  },
);
