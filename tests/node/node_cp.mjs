// Copies a file to or from the fake GCS with Google's Node client (the counterpart of
// tests/tools/gcs_cp.cpp).
//   node node_cp.mjs upload URL FILE BUCKET NAME      (resumable, 256 KiB chunks)
//   node node_cp.mjs download URL BUCKET NAME FILE    (crc32c-validated)
import {Storage} from '@google-cloud/storage';

const [mode, url, a, b, c] = process.argv.slice(2);
const storage = new Storage({apiEndpoint: url, projectId: 'fake-project',
                             useAuthWithCustomEndpoint: false});
if (mode === 'upload') {
  await storage.bucket(b).upload(a, {destination: c, resumable: true, chunkSize: 256 * 1024});
} else if (mode === 'download') {
  await storage.bucket(a).file(b).download({destination: c, validation: 'crc32c'});
} else {
  console.error('usage: node_cp.mjs upload|download ...');
  process.exit(2);
}
