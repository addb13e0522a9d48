using System.Numerics;

namespace Courier.Actors.Routing;

/// <summary>
/// A persistent map from a subject token to a trie node: a hash array mapped trie (32-way levels
/// indexed by five bits of the token's hash). Adding or removing returns a new map that shares all
/// but one path with the old one, so a change costs a few small arrays whatever the map's size.
/// </summary>
/// <remarks>
/// The SubList's literal levels were dictionaries copied whole on every change: a level with 5,000
/// children (<c>_INBOX.*</c>, one per client; <c>idle.N</c>) copied 5,000 entries per SUB, so 5,000
/// clients subscribing allocated 300 MB. Lookups take a span, with the string hash of its
/// characters (<see cref="string.GetHashCode(ReadOnlySpan{char})"/> equals the hash of the same
/// string), so a match walks tokens as slices and allocates nothing.
/// </remarks>
internal sealed class TokenMap<T>
    where T : class
{
    public static readonly TokenMap<T> Empty = new(0, [], 0);

    private const int BitsPerLevel = 5;
    private const int MaxShift = 30; // the last level uses the hash's top two bits; below it, collisions

    private readonly uint _bitmap;

    // Each slot is an Entry, a deeper TokenMap, or (below the last level) a Collision.
    private readonly object[] _slots;

    private TokenMap(uint bitmap, object[] slots, int count)
    {
        _bitmap = bitmap;
        _slots = slots;
        Count = count;
    }

    /// <summary>Tokens held.</summary>
    public int Count { get; }

    public bool TryGetValue(ReadOnlySpan<char> token, out T value) => TryGetValue(token, string.GetHashCode(token), out value);

    /// <summary>This map with <paramref name="token"/> mapped to <paramref name="value"/>.</summary>
    public TokenMap<T> SetItem(string token, T value) => SetItem(token, string.GetHashCode(token.AsSpan()), value);

    /// <summary>This map without <paramref name="token"/> (itself when it is not there).</summary>
    public TokenMap<T> Remove(string token) => Remove(token, string.GetHashCode(token.AsSpan()));

    // The same three with the token's hash given: tests choose hashes that share levels or collide.
    internal TokenMap<T> SetItem(string token, int hash, T value) => Set(new Entry(token, hash, value), 0);

    internal TokenMap<T> Remove(string token, int hash) => Remove(token, hash, 0) ?? Empty;

    internal bool TryGetValue(ReadOnlySpan<char> token, int hash, out T value)
    {
        var map = this;
        for (var shift = 0; ; shift += BitsPerLevel)
        {
            var bit = 1u << ((hash >> shift) & 31);
            if ((map._bitmap & bit) == 0)
            {
                value = null!;
                return false;
            }

            var slot = map._slots[BitOperations.PopCount(map._bitmap & (bit - 1))];
            if (slot is TokenMap<T> deeper)
            {
                map = deeper;
                continue;
            }

            if (slot is Entry entry)
            {
                var found = entry.Hash == hash && token.SequenceEqual(entry.Token);
                value = found ? entry.Value : null!;
                return found;
            }

            return ((Collision)slot).TryGetValue(token, out value);
        }
    }

    /// <summary>Every value, in no particular order.</summary>
    public void CollectValues(List<T> into)
    {
        foreach (var slot in _slots)
        {
            switch (slot)
            {
                case Entry entry:
                    into.Add(entry.Value);
                    break;
                case TokenMap<T> deeper:
                    deeper.CollectValues(into);
                    break;
                case Collision collision:
                    foreach (var entry in collision.Entries)
                    {
                        into.Add(entry.Value);
                    }

                    break;
            }
        }
    }

    private TokenMap<T> Set(Entry entry, int shift)
    {
        var bit = 1u << ((entry.Hash >> shift) & 31);
        var index = BitOperations.PopCount(_bitmap & (bit - 1));
        if ((_bitmap & bit) == 0)
        {
            var grown = new object[_slots.Length + 1];
            Array.Copy(_slots, grown, index);
            grown[index] = entry;
            Array.Copy(_slots, index, grown, index + 1, _slots.Length - index);
            return new TokenMap<T>(_bitmap | bit, grown, Count + 1);
        }

        object replacement;
        int added;
        switch (_slots[index])
        {
            case Entry existing when existing.Hash == entry.Hash && existing.Token == entry.Token:
                replacement = entry;
                added = 0;
                break;
            case Entry existing:
                replacement = Pair(existing, entry, shift + BitsPerLevel);
                added = 1;
                break;
            case TokenMap<T> deeper:
                var set = deeper.Set(entry, shift + BitsPerLevel);
                replacement = set;
                added = set.Count - deeper.Count;
                break;
            default:
                var collision = (Collision)_slots[index];
                var with = collision.Set(entry);
                replacement = with;
                added = with.Entries.Length - collision.Entries.Length;
                break;
        }

        var slots = (object[])_slots.Clone();
        slots[index] = replacement;
        return new TokenMap<T>(_bitmap, slots, Count + added);
    }

    // Two entries that share a slot at the level above: a deeper level holding both, or below the last level a collision.
    private static object Pair(Entry a, Entry b, int shift)
    {
        if (shift > MaxShift)
        {
            return new Collision([a, b]);
        }

        var bitA = 1u << ((a.Hash >> shift) & 31);
        var bitB = 1u << ((b.Hash >> shift) & 31);
        if (bitA == bitB)
        {
            return new TokenMap<T>(bitA, [Pair(a, b, shift + BitsPerLevel)], 2);
        }

        return bitA < bitB ? new TokenMap<T>(bitA | bitB, [a, b], 2) : new TokenMap<T>(bitA | bitB, [b, a], 2);
    }

    // Null when the map became empty.
    private TokenMap<T>? Remove(string token, int hash, int shift)
    {
        var bit = 1u << ((hash >> shift) & 31);
        if ((_bitmap & bit) == 0)
        {
            return this;
        }

        var index = BitOperations.PopCount(_bitmap & (bit - 1));
        object? replacement;
        switch (_slots[index])
        {
            case Entry entry:
                if (entry.Hash != hash || entry.Token != token)
                {
                    return this;
                }

                replacement = null;
                break;
            case TokenMap<T> deeper:
                var removed = deeper.Remove(token, hash, shift + BitsPerLevel);
                if (ReferenceEquals(removed, deeper))
                {
                    return this;
                }

                // A level left with one entry folds back into this one.
                replacement = removed is { Count: 1, _slots: [Entry only] } ? only : removed;
                break;
            default:
                var collision = (Collision)_slots[index];
                var without = collision.Remove(token);
                if (ReferenceEquals(without, collision))
                {
                    return this;
                }

                replacement = without.Entries.Length == 1 ? without.Entries[0] : without;
                break;
        }

        if (replacement is not null)
        {
            var slots = (object[])_slots.Clone();
            slots[index] = replacement;
            return new TokenMap<T>(_bitmap, slots, Count - 1);
        }

        if (_slots.Length == 1)
        {
            return null;
        }

        var shrunk = new object[_slots.Length - 1];
        Array.Copy(_slots, shrunk, index);
        Array.Copy(_slots, index + 1, shrunk, index, _slots.Length - index - 1);
        return new TokenMap<T>(_bitmap & ~bit, shrunk, Count - 1);
    }

    private sealed class Entry(string token, int hash, T value)
    {
        public string Token { get; } = token;

        public int Hash { get; } = hash;

        public T Value { get; } = value;
    }

    // Tokens whose 32-bit hashes are equal: a short list searched in turn.
    private sealed class Collision(Entry[] entries)
    {
        public Entry[] Entries { get; } = entries;

        public bool TryGetValue(ReadOnlySpan<char> token, out T value)
        {
            foreach (var entry in Entries)
            {
                if (token.SequenceEqual(entry.Token))
                {
                    value = entry.Value;
                    return true;
                }
            }

            value = null!;
            return false;
        }

        public Collision Set(Entry entry)
        {
            var at = Array.FindIndex(Entries, e => e.Token == entry.Token);
            var entries = at >= 0 ? (Entry[])Entries.Clone() : [.. Entries, entry];
            if (at >= 0)
            {
                entries[at] = entry;
            }

            return new Collision(entries);
        }

        public Collision Remove(string token)
        {
            var at = Array.FindIndex(Entries, e => e.Token == token);
            return at < 0 ? this : new Collision([.. Entries[..at], .. Entries[(at + 1)..]]);
        }
    }
}
