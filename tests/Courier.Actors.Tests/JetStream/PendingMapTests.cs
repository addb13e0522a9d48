using Courier.Actors.JetStream;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// A consumer's pending map answers as the sorted dictionary it replaced: the same entries, in
/// sequence order, through appends, out-of-order inserts, removals anywhere and re-insertions.
/// </summary>
public sealed class PendingMapTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void Random_deliveries_and_acks_leave_it_equal_to_a_sorted_dictionary(int seed)
    {
        var random = new Random(seed);
        var map = new PendingMap<string>();
        var model = new SortedDictionary<ulong, string>();
        ulong next = 1;
        for (var step = 0; step < 20_000; step++)
        {
            var op = random.Next(100);
            if (op < 45)
            {
                // A delivery: the next stream sequence, now and then with a gap (filtered subjects).
                next += (ulong)(random.Next(10) == 0 ? random.Next(2, 50) : 1);
                Set(next, $"d{step}");
            }
            else if (op < 50 && next > 1)
            {
                // A sequence below the last one: an existing entry updated, or one put back after its removal.
                Set((ulong)random.NextInt64(1, (long)next), $"u{step}");
            }
            else if (op < 80 && model.Count > 0)
            {
                // An ack of the oldest (the common case).
                Remove(model.Keys.First());
            }
            else if (op < 95 && model.Count > 0)
            {
                // An ack anywhere, or of something not pending.
                Remove(random.Next(4) == 0 ? next + 7 : model.Keys.ElementAt(random.Next(model.Count)));
            }
            else if (op < 96)
            {
                map.Clear();
                model.Clear();
            }

            if (step % 97 == 0)
            {
                AssertSame();
            }
        }

        AssertSame();

        void Set(ulong seq, string value)
        {
            map[seq] = value;
            model[seq] = value;
        }

        void Remove(ulong seq) => Assert.Equal(model.Remove(seq), map.Remove(seq));

        void AssertSame()
        {
            Assert.Equal(model.Count, map.Count);
            Assert.Equal(model.Select(e => (e.Key, e.Value)), Enumerate(map));
            Assert.Equal(model.Keys, map.Keys());
            Assert.Equal(model.Count == 0 ? 0 : model.Keys.Max(), map.MaxKey());
            var middle = model.Count == 0 ? 0 : model.Keys.ElementAt(model.Count / 2);
            Assert.Equal(model.Keys.TakeWhile(k => k <= middle), map.KeysUpTo(middle));
            if (model.Count == 0)
            {
                Assert.False(map.TryGetFirst(out _, out _));
            }
            else
            {
                Assert.True(map.TryGetFirst(out var seq, out var value));
                Assert.Equal(model.First(), new KeyValuePair<ulong, string>(seq, value));
            }

            foreach (var (seq, value) in model)
            {
                Assert.True(map.TryGetValue(seq, out var found));
                Assert.Equal(value, found);
                Assert.True(map.ContainsKey(seq));
            }

            Assert.False(map.ContainsKey(next + 1_000));
        }
    }

    [Fact]
    public void A_sequence_put_back_below_the_last_one_appears_once_in_order()
    {
        var map = new PendingMap<string>();
        for (ulong seq = 1; seq <= 5; seq++)
        {
            map[seq] = $"v{seq}";
        }

        Assert.True(map.Remove(3));
        Assert.True(map.Remove(5));
        map[3] = "again";
        map[5] = "again";
        map[4] = "updated";

        Assert.Equal([(1UL, "v1"), (2UL, "v2"), (3UL, "again"), (4UL, "updated"), (5UL, "again")], Enumerate(map));
        Assert.Equal(5, map.Count);
        Assert.Equal(5UL, map.MaxKey());
    }

    [Fact]
    public void Acks_from_the_front_keep_the_first_entry_and_the_floor_current()
    {
        var map = new PendingMap<string>();
        for (ulong seq = 1; seq <= 1_000; seq++)
        {
            map[seq] = $"v{seq}";
        }

        for (ulong seq = 1; seq < 1_000; seq++)
        {
            Assert.True(map.Remove(seq));
            Assert.True(map.TryGetFirst(out var first, out _));
            Assert.Equal(seq + 1, first);
        }

        Assert.True(map.Remove(1_000));
        Assert.False(map.Remove(1_000));
        Assert.False(map.TryGetFirst(out _, out _));
        Assert.Equal(0UL, map.MaxKey());
        Assert.Empty(map.Keys());
    }

    [Fact]
    public void Changing_the_map_while_enumerating_it_throws_instead_of_skipping_entries()
    {
        var map = new PendingMap<string>();
        map[1] = "a";
        map[2] = "b";

        Assert.Throws<InvalidOperationException>(() =>
        {
            foreach (var (seq, _) in map)
            {
                map.Remove(seq);
            }
        });
    }

    private static List<(ulong, string)> Enumerate(PendingMap<string> map)
    {
        var entries = new List<(ulong, string)>();
        foreach (var (seq, value) in map)
        {
            entries.Add((seq, value));
        }

        return entries;
    }
}
