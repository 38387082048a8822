const pprof = require('@datadog/pprof');
const fs = require('fs');
const zlib = require('zlib');
const interval = parseInt(process.env.INTERVAL || '32768');
pprof.heap.start(interval, 64);
const keepA = [], keepB = [];
function siteA() { for (let i = 0; i < 4000; i++) keepA.push(new Array(1000).fill(i)); }   // ~32 MB
function siteB() { for (let i = 0; i < 200000; i++) keepB.push({a: i, b: i + 1, c: 'x' + i}); } // small objects
siteA(); siteB();
global.gc && global.gc();
const prof = pprof.heap.profile();
pprof.encode(prof).then(buf => {
  fs.writeFileSync(process.argv[2] || 'heap.pb.gz', buf);
  console.log('wrote', buf.length, 'heapUsed', process.memoryUsage().heapUsed, keepA.length, keepB.length);
});
