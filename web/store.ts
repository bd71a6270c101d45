import { useEffect, useState } from 'preact/hooks';

/** A value that components follow: set() re-renders every component that uses it. */
export class Store<T> {
  private listeners = new Set<(value: T) => void>();
  constructor(private current: T) {}
  get value(): T {
    return this.current;
  }
  set(value: T): void {
    this.current = value;
    for (const listener of [...this.listeners]) listener(value);
  }
  update(fn: (value: T) => T): void {
    this.set(fn(this.current));
  }
  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useStore<T>(store: Store<T>): T {
  const value = store.value;
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    const off = store.subscribe(update);
    // A change between the render and this effect (a socket's HELLO on a fast LAN) would be missed otherwise.
    if (store.value !== value) update();
    return () => {
      off();
    };
  }, [store]);
  return value;
}

/** A re-render every `ms` (ages on the kitchen cards). */
export function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
