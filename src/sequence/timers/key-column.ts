import { growFloat64 } from './timer-queue.ts';

/**
 * The key of each node, by node index, for the binary heap. (The timing wheel keeps numeric keys
 * in its slot entries instead, where a sweep already reads; see timing-wheel.ts.)
 *
 * While every key is a number, keys live unboxed in a Float64Array: 8 bytes each, nothing for the
 * garbage collector to scan, no HeapNumber per non-small-integer key. The first key that is not a
 * number moves them all into a JS array (8 bytes per pointer on 64-bit Node, plus whatever the key
 * object or string itself costs, which is the caller's). That array is kept at full capacity and
 * packed (filled with undefined, never holes) so its element kind stays PACKED_ELEMENTS.
 */
export class KeyColumn<K> {
  // `declare`: assigned first in the constructor, so V8 tracks the field as a Float64Array (see
  // the timing wheel's fields).
  private declare nums: Float64Array | null;
  private refs: (K | undefined)[] | null = null;

  constructor(capacity: number) {
    this.nums = new Float64Array(capacity);
  }

  set(n: number, key: K): void {
    const nums = this.nums;
    if (nums !== null && typeof key === 'number') nums[n] = key;
    else this.setRef(n, key);
  }

  get(n: number): K {
    const nums = this.nums;
    return (nums !== null ? nums[n] : this.refs![n]) as K;
  }

  /** Drops the reference held for node n (numbers hold nothing). */
  release(n: number): void {
    if (this.refs !== null) this.refs[n] = undefined;
  }

  grow(capacity: number): void {
    if (this.nums !== null) {
      this.nums = growFloat64(this.nums, capacity);
      return;
    }
    const refs = this.refs!;
    for (let i = refs.length; i < capacity; i++) refs.push(undefined);
  }

  /** Drops the references held for nodes [0, used) (numbers hold nothing). */
  releaseAll(used: number): void {
    if (this.refs !== null) this.refs.fill(undefined, 0, used);
  }

  private setRef(n: number, key: K): void {
    if (this.refs === null) {
      const nums = this.nums!;
      const refs: (K | undefined)[] = [];
      for (let i = 0; i < nums.length; i++) refs.push(nums[i] as K);
      this.refs = refs;
      this.nums = null;
    }
    this.refs[n] = key;
  }
}
