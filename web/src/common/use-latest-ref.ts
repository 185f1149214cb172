import { useRef, type MutableRefObject } from 'react';

/** A ref holding the value of the last render: read at call time by callbacks that must not re-run an effect. */
export function useLatestRef<T>(value: T): MutableRefObject<T> {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}
