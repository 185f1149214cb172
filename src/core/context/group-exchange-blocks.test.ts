import { describe, expect, it } from 'vitest';
import { expandPinToExchange } from './expand-pin-to-exchange';
import { groupExchangeBlocks } from './group-exchange-blocks';
import { calls, note, parallelExchange, reply, result, user } from './test-fixtures';

const blockSeqs = (blocks: { seq: number }[][]) => blocks.map((block) => block.map((entry) => entry.seq));

describe('groupExchangeBlocks', () => {
  it('puts plain messages in blocks of their own', () => {
    expect(blockSeqs(groupExchangeBlocks([user(1), reply(2), note(3), user(4)]))).toEqual([[1], [2], [3], [4]]);
    expect(groupExchangeBlocks([])).toEqual([]);
  });

  it.each([1, 3, 10])(
    'keeps an assistant message with %i parallel calls and its answers (any order) together',
    (count) => {
      const window = [user(1), ...parallelExchange(2, count), reply(2 + count + 1)];
      const blocks = groupExchangeBlocks(window);
      expect(blockSeqs(blocks)).toEqual([[1], Array.from({ length: count + 1 }, (_, index) => 2 + index), [count + 3]]);
    },
  );

  it('merges a block of tool messages answering two different assistant messages', () => {
    const window = [user(1), calls(2, ['a']), calls(3, ['b']), result(4, 'b'), result(5, 'a'), reply(6)];
    expect(blockSeqs(groupExchangeBlocks(window))).toEqual([[1], [2, 3, 4, 5], [6]]);
  });

  it('keeps a message recorded between a call and its answer inside the exchange', () => {
    const window = [calls(1, ['a']), user(2), result(3, 'a'), user(4)];
    expect(blockSeqs(groupExchangeBlocks(window))).toEqual([[1, 2, 3], [4]]);
  });

  it('attaches a tool message whose call is absent to the block before it; a leading one opens the first block', () => {
    expect(blockSeqs(groupExchangeBlocks([user(1), result(2, 'gone'), user(3)]))).toEqual([[1, 2], [3]]);
    expect(blockSeqs(groupExchangeBlocks([result(1, 'gone'), result(2, 'gone2'), user(3)]))).toEqual([[1, 2], [3]]);
  });

  it('treats an unanswered call as a block of its own', () => {
    expect(blockSeqs(groupExchangeBlocks([user(1), calls(2, ['x']), user(3)]))).toEqual([[1], [2], [3]]);
  });
});

describe('expandPinToExchange', () => {
  const window = [user(1), calls(2, ['a', 'b']), result(3, 'b'), user(4), result(5, 'a'), reply(6)];

  it('pins the whole exchange from the call or from any result', () => {
    expect(expandPinToExchange(window, 2)).toEqual([2, 3, 5]);
    expect(expandPinToExchange(window, 3)).toEqual([2, 3, 5]);
    expect(expandPinToExchange(window, 5)).toEqual([2, 3, 5]);
  });

  it('pins a plain message alone, even inside an exchange', () => {
    expect(expandPinToExchange(window, 1)).toEqual([1]);
    expect(expandPinToExchange(window, 4)).toEqual([4]);
    expect(expandPinToExchange(window, 6)).toEqual([6]);
  });

  it('pins both assistant messages of overlapping exchanges together', () => {
    const overlapping = [calls(1, ['a']), calls(2, ['b']), result(3, 'b'), result(4, 'a')];
    expect(expandPinToExchange(overlapping, 4)).toEqual([1, 2, 3, 4]);
  });

  it('returns nothing for an unknown seq', () => {
    expect(expandPinToExchange(window, 99)).toEqual([]);
  });
});
