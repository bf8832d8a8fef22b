// The Node side of bench/gcs_bench.sh: the same operations as kinetic_gcs_bench, with Google's
// @google-cloud/storage (from tests/node/node_modules; `npm ci` there first).
//
//   node gcs_node.mjs ENDPOINT [--threads N] upload FILE BUCKET NAME
//   node gcs_node.mjs ENDPOINT [--threads N] download BUCKET NAME FILE
//   node gcs_node.mjs ENDPOINT [--threads N] upload-many DIR BUCKET PREFIX
//   node gcs_node.mjs ENDPOINT [--threads N] download-many BUCKET PREFIX DIR
//   node gcs_node.mjs ENDPOINT overhead BUCKET NAME [ITERATIONS]
//
// Client defaults throughout: bucket.upload() goes resumable above 5 MB with the default
// chunkSize (the whole file in one streamed PUT) and validates crc32c/md5; file.download()
// streams to the destination and validates. --threads N: a promise pool of N uploads/downloads
// in flight (one client; Node is single-threaded). Prints one summary line.
import {createRequire} from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'tests', 'node', 'package.json'));
const {Storage} = require('@google-cloud/storage');

const argv = process.argv.slice(2);
const endpoint = argv.shift();
let threads = 1;
const args = [];
for (let i = 0; i < argv.length; ++i) {
  if (argv[i] === '--threads') threads = Math.max(1, Number(argv[++i]));
  else args.push(argv[i]);
}
if (!endpoint || args.length < 3) {
  console.error('usage: node gcs_node.mjs ENDPOINT [--threads N] COMMAND ARGS...');
  process.exit(2);
}

const storage = new Storage({
  apiEndpoint: endpoint,
  projectId: 'fake-project',
  useAuthWithCustomEndpoint: false,
});

async function pool(items, n, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({length: Math.min(n, items.length)}, worker));
}

const t0 = process.hrtime.bigint();
const secs = () => Number(process.hrtime.bigint() - t0) / 1e9;

async function main() {
  const [cmd] = args;
  if (cmd === 'upload') {
    const [, file, bucket, name] = args;
    const [f] = await storage.bucket(bucket).upload(file, {destination: name, resumable: true});
    console.log(`upload: ${f.metadata.size} bytes in ${secs().toFixed(3)} s`);
  } else if (cmd === 'download') {
    const [, bucket, name, file] = args;
    await storage.bucket(bucket).file(name).download({destination: file});
    console.log(`download: ${fs.statSync(file).size} bytes in ${secs().toFixed(3)} s`);
  } else if (cmd === 'upload-many') {
    const [, dir, bucket, prefix] = args;
    const files = fs.readdirSync(dir, {withFileTypes: true}).filter(d => d.isFile()).map(d => d.name).sort();
    const b = storage.bucket(bucket);
    let bytes = 0;
    await pool(files, threads, async name => {
      const [f] = await b.upload(path.join(dir, name), {destination: prefix + name});
      bytes += Number(f.metadata.size);
    });
    console.log(`upload-many: ${files.length} files, ${bytes} bytes in ${secs().toFixed(3)} s, ${threads} in flight`);
  } else if (cmd === 'download-many') {
    const [, bucket, prefix, dir] = args;
    const b = storage.bucket(bucket);
    const [files] = await b.getFiles({prefix});
    fs.mkdirSync(dir, {recursive: true});
    let bytes = 0;
    await pool(files, threads, async f => {
      const dest = path.join(dir, f.name.slice(prefix.length));
      await f.download({destination: dest});
      bytes += fs.statSync(dest).size;
    });
    console.log(`download-many: ${files.length} files, ${bytes} bytes in ${secs().toFixed(3)} s, ${threads} in flight`);
  } else if (cmd === 'overhead') {
    const [, bucket, name, n = '2000'] = args;
    const f = storage.bucket(bucket).file(name);
    for (let i = 0; i < 50; ++i) await f.getMetadata();
    const us = [];
    for (let i = 0; i < Number(n); ++i) {
      const s = process.hrtime.bigint();
      await f.getMetadata();
      us.push(Number(process.hrtime.bigint() - s) / 1e3);
    }
    us.sort((a, b) => a - b);
    const med = us.length % 2 ? us[(us.length - 1) / 2] : (us[us.length / 2 - 1] + us[us.length / 2]) / 2;
    console.log(`overhead: getMetadata median ${med.toFixed(1)} us (min ${us[0].toFixed(1)}) over ${n}`);
  } else {
    console.error(`unknown command ${cmd}`);
    process.exit(2);
  }
}

main().catch(err => {
  console.error(`gcs_node: ${err.stack || err}`);
  process.exit(1);
});
