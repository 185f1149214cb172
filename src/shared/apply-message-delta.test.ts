import { describe, expect, it } from 'vitest';
import { applyMessageDelta } from './apply-message-delta';

describe('applyMessageDelta', () => {
  it('appends a delta that starts at the end of the text', () => {
    expect(applyMessageDelta('Hello', { offset: 5, delta: ' world' })).toBe('Hello world');
  });

  it('drops a delta the text already has', () => {
    expect(applyMessageDelta('Hello world', { offset: 5, delta: ' world' })).toBe('Hello world');
    expect(applyMessageDelta('Hello world', { offset: 0, delta: 'Hello' })).toBe('Hello world');
  });

  it('adds only the new part of a delta that overlaps the end', () => {
    expect(applyMessageDelta('Hello wo', { offset: 5, delta: ' world' })).toBe('Hello world');
  });

  it('reports a delta beyond the end as a gap', () => {
    expect(applyMessageDelta('Hello', { offset: 7, delta: 'rld' })).toBeNull();
  });
});
