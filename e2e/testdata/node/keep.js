// keep.js keeps two sites' objects alive and writes the heap profile V8's
// sampler took of them: with --heap-prof Node writes it at exit (the
// .heapprofile route); with a file argument, @datadog/pprof writes it as
// pprof (the pprof route, NODE_PATH naming its node_modules). Both collect
// the garbage first (--expose-gc): V8 drops the samples of dead objects
// only when it collects them, and a profile taken before would count the
// temporaries too.
//
//   node --expose-gc --heap-prof --heap-prof-interval=R --heap-prof-dir=DIR keep.js
//   INTERVAL=R node --expose-gc keep.js OUT.pb.gz
const out = process.argv[2];
let pprof;
if (out) {
  pprof = require('@datadog/pprof');
  pprof.heap.start(parseInt(process.env.INTERVAL), 64);
}
const keepA = [], keepB = [];
// siteA: 4,000 arrays of 1,000 small integers, about 32 MB.
function siteA() { for (let i = 0; i < 4000; i++) keepA.push(new Array(1000).fill(i)); }
// siteB: 200,000 objects of three properties, one a string.
function siteB() { for (let i = 0; i < 200000; i++) keepB.push({a: i, b: i + 1, c: 'x' + i}); }
siteA();
siteB();
globalThis.kept = [keepA, keepB];
global.gc();
if (out) {
  pprof.encode(pprof.heap.profile()).then(buf => require('fs').writeFileSync(out, buf));
}
