using System.Diagnostics.CodeAnalysis;
using System.Runtime.InteropServices;

namespace Courier.Actors.JetStream;

/// <summary>
/// A consumer's deliveries awaiting acknowledgement, by stream sequence, kept in sequence order: a
/// hash map for lookups beside an array of the sequences in ascending order.
/// </summary>
/// <remarks>
/// A consumer delivers in stream order, so a new pending sequence is almost always above every other
/// and lands at the end of the array; acknowledgements come mostly from the front. A sorted tree
/// (what this replaced) allocated a node per delivery and walked log n nodes per delivery and per
/// ack: 5-7% of a durable pull consumer's CPU in the jsfetch row. Here an insert is an append (a
/// binary search and a shift only for a sequence below the last, which recovery and redelivery
/// never need: they update sequences already present), and a removal is a hash removal: the array
/// keeps the sequence until it reaches the front or dead sequences outnumber live ones, when it is
/// compacted. Not thread-safe; the consumer actor owns it.
/// </remarks>
internal sealed class PendingMap<T>
    where T : class
{
    private readonly Dictionary<ulong, T> _map = [];
    private ulong[] _order = new ulong[16]; // ascending; [_head, _tail) may hold sequences removed from _map
    private int _head;
    private int _tail;
    private int _version;

    public int Count => _map.Count;

    public T this[ulong seq]
    {
        get => _map[seq];
        set => Set(seq, value);
    }

    public bool TryGetValue(ulong seq, [MaybeNullWhen(false)] out T value) => _map.TryGetValue(seq, out value);

    public bool ContainsKey(ulong seq) => _map.ContainsKey(seq);

    public void Set(ulong seq, T value)
    {
        ref var slot = ref CollectionsMarshal.GetValueRefOrAddDefault(_map, seq, out var exists);
        slot = value;
        if (!exists)
        {
            Insert(seq);
        }
    }

    public bool Remove(ulong seq)
    {
        if (!_map.Remove(seq))
        {
            return false;
        }

        _version++;
        if (_map.Count == 0)
        {
            _head = _tail = 0;
            return true;
        }

        TrimHead();
        if (_tail - _head > (2 * _map.Count) + 32)
        {
            Compact();
        }

        return true;
    }

    public void Clear()
    {
        _map.Clear();
        _head = _tail = 0;
        _version++;
    }

    /// <summary>The lowest pending sequence and its entry; false when nothing is pending.</summary>
    public bool TryGetFirst(out ulong seq, [MaybeNullWhen(false)] out T value)
    {
        TrimHead();
        if (_head < _tail)
        {
            seq = _order[_head];
            value = _map[seq];
            return true;
        }

        seq = 0;
        value = null;
        return false;
    }

    /// <summary>The highest pending sequence; 0 when nothing is pending.</summary>
    public ulong MaxKey()
    {
        for (var i = _tail - 1; i >= _head; i--)
        {
            if (_map.ContainsKey(_order[i]))
            {
                return _order[i];
            }
        }

        return 0;
    }

    /// <summary>The pending sequences in ascending order (a copy: the map may change while it is used).</summary>
    public List<ulong> Keys() => KeysUpTo(ulong.MaxValue);

    /// <summary>The pending sequences up to <paramref name="last"/> included, ascending (a copy).</summary>
    public List<ulong> KeysUpTo(ulong last)
    {
        var keys = new List<ulong>();
        for (var i = _head; i < _tail && _order[i] <= last; i++)
        {
            if (_map.ContainsKey(_order[i]))
            {
                keys.Add(_order[i]);
            }
        }

        return keys;
    }

    /// <summary>The entries in no particular order.</summary>
    public Dictionary<ulong, T>.ValueCollection Values => _map.Values;

    /// <summary>The entries in ascending sequence order; the map must not change during the enumeration.</summary>
    public Enumerator GetEnumerator() => new(this);

    private void Insert(ulong seq)
    {
        _version++;
        EnsureRoomAtTail();
        if (_head == _tail || seq > _order[_tail - 1])
        {
            _order[_tail++] = seq;
            return;
        }

        // Below the last: its place in the order, unless the sequence is still there from before its removal.
        var index = Array.BinarySearch(_order, _head, _tail - _head, seq);
        if (index >= 0)
        {
            return;
        }

        index = ~index;
        Array.Copy(_order, index, _order, index + 1, _tail - index);
        _order[index] = seq;
        _tail++;
    }

    private void EnsureRoomAtTail()
    {
        if (_tail < _order.Length)
        {
            return;
        }

        Compact();
        if (_tail == _order.Length)
        {
            Array.Resize(ref _order, _order.Length * 2);
        }
    }

    private void TrimHead()
    {
        while (_head < _tail && !_map.ContainsKey(_order[_head]))
        {
            _head++;
        }

        if (_head == _tail)
        {
            _head = _tail = 0;
        }
    }

    // Keeps the live sequences only, moved to the front.
    private void Compact()
    {
        var kept = 0;
        for (var i = _head; i < _tail; i++)
        {
            if (_map.ContainsKey(_order[i]))
            {
                _order[kept++] = _order[i];
            }
        }

        _head = 0;
        _tail = kept;
    }

    public struct Enumerator
    {
        private readonly PendingMap<T> _owner;
        private readonly int _version;
        private int _index;
        private KeyValuePair<ulong, T> _current;

        internal Enumerator(PendingMap<T> owner)
        {
            _owner = owner;
            _version = owner._version;
            _index = owner._head;
            _current = default;
        }

        public readonly KeyValuePair<ulong, T> Current => _current;

        public bool MoveNext()
        {
            if (_version != _owner._version)
            {
                throw new InvalidOperationException("The pending map changed during its enumeration.");
            }

            while (_index < _owner._tail)
            {
                var seq = _owner._order[_index++];
                if (_owner._map.TryGetValue(seq, out var value))
                {
                    _current = new KeyValuePair<ulong, T>(seq, value);
                    return true;
                }
            }

            return false;
        }
    }
}
