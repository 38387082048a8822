const keepA = [], keepB = [];
function siteA() { for (let i = 0; i < 4000; i++) keepA.push(new Array(1000).fill(i)); }
function siteB() { for (let i = 0; i < 200000; i++) keepB.push({a: i, b: i + 1, c: 'x' + i}); }
siteA(); siteB();
globalThis.keep = [keepA, keepB];
