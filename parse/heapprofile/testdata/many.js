// many.js: 3,000 functions, each keeping 200 small objects, so that a
// heap profile has thousands of nodes.
//   node --heap-prof --heap-prof-interval=16384 many.js
const keep = [];
const fs = [];
for (let i = 0; i < 3000; i++) {
  // eval names each function (f0, f1, ...), as written code would.
  fs.push(eval(`(function f${i}(n) { for (let j = 0; j < n; j++) keep.push({k: j, s: 'a${i}' + j, v: new Array(${i % 40}).fill(j)}); })`));
}
for (const f of fs) f(200);
global.kept = keep;
