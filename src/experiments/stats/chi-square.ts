/**
 * The chi-square distribution's upper tail, P(X ≥ x) for k degrees of freedom: the regularised
 * upper incomplete gamma Q(k/2, x/2), by its series below a+1 and its continued fraction above
 * (Press et al., Numerical Recipes, 3rd ed., §6.2), with Lanczos' log-gamma.
 */
export function chiSquareSurvival(x: number, k: number): number {
  if (!(k > 0)) throw new RangeError(`chiSquareSurvival: k must be positive, got ${k}`);
  if (!(x > 0)) return 1;
  return upperGamma(k / 2, x / 2);
}

function upperGamma(a: number, x: number): number {
  if (x < a + 1) return 1 - lowerSeries(a, x);
  return upperFraction(a, x);
}

function lowerSeries(a: number, x: number): number {
  let sum = 1 / a;
  let term = sum;
  for (let n = 1; n < 1000; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * 1e-15) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - logGamma(a));
}

function upperFraction(a: number, x: number): number {
  // Modified Lentz's method.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}

const lanczos = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];

export function logGamma(z: number): number {
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const x = z - 1;
  let s = lanczos[0]!;
  for (let i = 1; i < 9; i++) s += lanczos[i]! / (x + i);
  const t = x + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(s);
}
