"""CRC32C (Castagnoli) of many messages at once, in numpy: what TFRecord frames its records with.

Host runtime, numpy only. A CRC is computed byte after byte, so one message is a Python loop;
but many messages of one length can go in step, a byte column at a time for all of them
(`_by_columns`: best for many short messages), and since the CRC is linear over GF(2), each
byte's part can also be looked up by its distance from the message's end and all parts XORed
together (`_by_positions`: every byte of every message at once, best for few long ones).
`crc32c_rows` picks between them.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["crc32c", "crc32c_rows", "crc32c_sparse"]

_POLY = 0x82F63B78  # the Castagnoli polynomial, bit-reflected
_ONES = np.uint32(0xFFFFFFFF)  # the initial state and the final XOR
#: `_by_positions` looks bytes up in blocks of this many (its table: this many KiB).
_BLOCK = 512
#: Messages at least this many go by columns: a column step costs a few numpy calls, paid
#: once for all messages, then ~1.5 element operations a byte; by positions costs ~4 a byte
#: but few calls (benchmarks/tensorboard.py times the writer both ways round).
_COLUMNS_FROM = 1024


@functools.cache
def _table() -> np.ndarray:
    """The state one byte leaves from state 0: ``T[b]``. One step from state ``c`` over byte
    ``b`` is ``T[(c ^ b) & 0xFF] ^ (c >> 8)``, which is ``zero(c) ^ T[b]`` (`_zero`)."""
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(_POLY), t >> 1).astype(np.uint32)
    return t


def _zero(c: np.ndarray) -> np.ndarray:
    """States after one more zero byte (a linear map of the state)."""
    return _table()[c & 0xFF] ^ (c >> 8)


@functools.cache
def _word_tables() -> tuple[np.ndarray, np.ndarray]:
    """Two 16-bit tables that take the state over a whole 4-byte word ``w``: with ``x = c ^ w``
    the new state is ``lo[x & 0xFFFF] ^ hi[x >> 16]`` (two lookups for four bytes)."""
    t = _table()
    after = [t]  # after[k][b]: what byte b leaves once k zero bytes followed it
    for _ in range(3):
        after.append(_zero(after[-1]))
    i = np.arange(1 << 16, dtype=np.uint32)
    return after[3][i & 0xFF] ^ after[2][i >> 8], after[1][i & 0xFF] ^ after[0][i >> 8]


@functools.cache
def _position_table() -> np.ndarray:
    """``P[p, b]``: what byte ``b`` contributes to the state once ``p`` bytes followed it."""
    rows = [_table()]
    for _ in range(_BLOCK - 1):
        rows.append(_zero(rows[-1]))
    return np.stack(rows)


# A linear map of the 32-bit state, as the images of its 32 bits.
def _apply(images: np.ndarray, x: np.ndarray) -> np.ndarray:
    bits = (x[..., None] >> np.arange(32, dtype=np.uint32)) & 1
    return np.bitwise_xor.reduce(np.where(bits == 1, images, np.uint32(0)), axis=-1)


@functools.cache
def _shift_tables(n: int) -> np.ndarray:
    """Four byte tables for "``n`` zero bytes follow": ``x`` goes to ``t[0][x & 0xFF] ^
    t[1][(x >> 8) & 0xFF] ^ t[2][(x >> 16) & 0xFF] ^ t[3][x >> 24]``."""
    basis = np.uint32(1) << np.arange(32, dtype=np.uint32)
    images, power = basis.copy(), _zero(basis)  # identity; one zero byte
    while n:  # square and multiply: maps compose as images of images
        if n & 1:
            images = _apply(power, images)
        power = _apply(power, power)
        n >>= 1
    b = np.arange(256, dtype=np.uint32)
    return np.stack([_apply(images, b << np.uint32(8 * k)) for k in range(4)])


def _shift(x: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return x
    t = _shift_tables(n)
    return t[0][x & 0xFF] ^ t[1][(x >> 8) & 0xFF] ^ t[2][(x >> 16) & 0xFF] ^ t[3][x >> 24]


def crc32c_rows(data: np.ndarray) -> np.ndarray:
    """The CRC32C of each row of the uint8 matrix ``data`` (messages, length), as uint32.

    >>> hex(int(crc32c_rows(np.frombuffer(b"123456789", np.uint8)[None])[0]))
    '0xe3069283'
    """
    data = np.asarray(data, np.uint8)
    if len(data) >= _COLUMNS_FROM or data.shape[1] < 8:
        return _by_columns(data)
    return _by_positions(data)


def crc32c_sparse(data: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """`crc32c_rows` of messages that differ only in ``columns`` (their other bytes are the
    first row's): the CRC of the shared bytes once, then only the bytes that differ, each
    looked up by its distance from the end (for records of a few scalars, a small part)."""
    n, length = data.shape
    if length > _BLOCK or n == 0:
        return crc32c_rows(data)
    shared = data[0].copy()
    shared[columns] = 0
    crc = np.full(n, crc32c_rows(shared[None])[0], np.uint32)
    table = _position_table()
    for j in np.asarray(columns).tolist():
        crc ^= table[length - 1 - j][data[:, j]]  # what the byte adds, zero being none
    return crc


def crc32c(data: bytes) -> int:
    """The CRC32C of ``data``.

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    return int(crc32c_rows(np.frombuffer(data, np.uint8)[None])[0])


def _by_columns(data: np.ndarray) -> np.ndarray:
    """All messages in step, a 4-byte word of each at a time."""
    lo, hi = _word_tables()
    n, length = data.shape
    crc = np.full(n, _ONES, np.uint32)
    full = length // 4
    if full and n:
        # The words in columns, each contiguous: a step reads one column.
        words = np.ascontiguousarray(data[:, : 4 * full]).view("<u4").T.copy()
        x = np.empty(n, np.uint32)
        low = np.empty(n, np.uint32)
        for k in range(full):
            np.bitwise_xor(crc, words[k], out=x)
            np.bitwise_and(x, 0xFFFF, out=low)
            np.right_shift(x, 16, out=x)
            np.take(lo, low, out=crc)
            crc ^= np.take(hi, x)
    table = _table()
    for j in range(4 * full, length):
        crc = table[(crc ^ data[:, j]) & 0xFF] ^ (crc >> 8)
    return crc ^ _ONES


def _by_positions(data: np.ndarray) -> np.ndarray:
    """Every byte's part at once: the state after a message is ``shift(initial state, length)``
    XOR, for each byte, ``P[bytes after it, byte]``; a block of `_BLOCK` bytes is summed from
    the table, then shifted past the bytes that follow the block."""
    flat = _position_table().reshape(-1)
    n, length = data.shape
    crc = np.full(n, _shift(np.array(_ONES), length), np.uint32)
    for start in range(0, length, _BLOCK):
        end = min(start + _BLOCK, length)
        after = np.arange(end - start - 1, -1, -1, dtype=np.intp) * 256
        part = np.bitwise_xor.reduce(flat[after + data[:, start:end]], axis=1)
        crc ^= _shift(part, length - end)
    return crc ^ _ONES
