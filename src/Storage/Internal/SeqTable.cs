namespace Courier.Storage.Internal;

/// <summary>
/// A sequence-indexed table: chunks of 1,024 entries in a ring, so appends at the end and trims at
/// the front are O(1) and a lookup is two array indexings. Chunks never touched stay unallocated.
/// </summary>
internal sealed class SeqTable<T>
{
    private const int Shift = 10;               // 1,024 entries per chunk
    private const int ChunkSize = 1 << Shift;
    private const int Mask = ChunkSize - 1;

    private T[]?[] _ring = new T[]?[16];
    private int _head;          // ring index of chunk number _firstChunk
    private int _count;         // chunks in the ring
    private ulong _firstChunk;

    /// <summary>True when <paramref name="seq"/> falls in an allocated chunk (its entry may still be default).</summary>
    public bool Contains(ulong seq)
    {
        var c = seq >> Shift;
        if (_count == 0 || c < _firstChunk || c - _firstChunk >= (ulong)_count)
        {
            return false;
        }

        return _ring[(_head + (int)(c - _firstChunk)) & (_ring.Length - 1)] is not null;
    }

    /// <summary>The entry for <paramref name="seq"/>; only valid when <see cref="Contains"/> is true.</summary>
    public ref T this[ulong seq]
    {
        get
        {
            var c = seq >> Shift;
            var chunk = _ring[(_head + (int)(c - _firstChunk)) & (_ring.Length - 1)]!;
            return ref chunk[(int)(seq & Mask)];
        }
    }

    /// <summary>The entry for <paramref name="seq"/> if its chunk exists, else a copy of default.</summary>
    public T Get(ulong seq) => Contains(seq) ? this[seq] : default!;

    /// <summary>The entry for <paramref name="seq"/>, allocating its chunk if needed.</summary>
    public ref T GetOrAdd(ulong seq)
    {
        var c = seq >> Shift;
        if (_count == 0)
        {
            _firstChunk = c;
            _head = 0;
            _count = 1;
            Array.Clear(_ring);
        }
        else if (c < _firstChunk)
        {
            Prepend(_firstChunk - c);
        }
        else
        {
            var needed = c - _firstChunk + 1;
            if (needed > (ulong)_count)
            {
                EnsureCapacity(needed);
                _count = (int)needed;
            }
        }

        ref var slot = ref _ring[(_head + (int)(c - _firstChunk)) & (_ring.Length - 1)];
        slot ??= new T[ChunkSize];
        return ref slot[(int)(seq & Mask)];
    }

    /// <summary>Drops the chunks that hold only sequences below <paramref name="seq"/>.</summary>
    public void TrimBelow(ulong seq)
    {
        var c = seq >> Shift;
        while (_count > 0 && _firstChunk < c)
        {
            _ring[_head] = null;
            _head = (_head + 1) & (_ring.Length - 1);
            _firstChunk++;
            _count--;
        }
    }

    /// <summary>Clears the entries from <paramref name="seq"/> on (to default) without freeing chunks below.</summary>
    public void ClearFrom(ulong seq)
    {
        if (_count == 0)
        {
            return;
        }

        var lastChunk = _firstChunk + (ulong)_count - 1;
        var c = seq >> Shift;
        if (c < _firstChunk)
        {
            Clear();
            return;
        }

        if (c > lastChunk)
        {
            return;
        }

        var chunk = _ring[(_head + (int)(c - _firstChunk)) & (_ring.Length - 1)];
        if (chunk is not null)
        {
            Array.Clear(chunk, (int)(seq & Mask), ChunkSize - (int)(seq & Mask));
        }

        for (var k = c + 1; k <= lastChunk; k++)
        {
            _ring[(_head + (int)(k - _firstChunk)) & (_ring.Length - 1)] = null;
        }

        _count = (int)(c - _firstChunk + 1);
    }

    /// <summary>Drops everything.</summary>
    public void Clear()
    {
        Array.Clear(_ring);
        _head = 0;
        _count = 0;
        _firstChunk = 0;
    }

    private void EnsureCapacity(ulong chunks)
    {
        if (chunks <= (ulong)_ring.Length)
        {
            return;
        }

        if (chunks > int.MaxValue / 2)
        {
            throw new InvalidOperationException("sequence range too wide for the in-memory table");
        }

        var size = _ring.Length;
        while ((ulong)size < chunks)
        {
            size *= 2;
        }

        var ring = new T[]?[size];
        for (var i = 0; i < _count; i++)
        {
            ring[i] = _ring[(_head + i) & (_ring.Length - 1)];
        }

        _ring = ring;
        _head = 0;
    }

    private void Prepend(ulong chunks)
    {
        EnsureCapacity((ulong)_count + chunks);
        _head = (int)(((ulong)_head + (ulong)_ring.Length - chunks) & (ulong)(_ring.Length - 1));
        for (ulong i = 0; i < chunks; i++)
        {
            _ring[(_head + (int)i) & (_ring.Length - 1)] = null;
        }

        _firstChunk -= chunks;
        _count += (int)chunks;
    }
}
