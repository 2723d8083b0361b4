// total adds up a list of numbers.
function total(xs) {
  let s = 0;
  for (let i = 1; i < xs.length; i++) s += xs[i];
  return s;
}
module.exports = { total };
