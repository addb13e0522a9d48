using Courier.Actors.Routing;
using Xunit;

namespace Courier.Actors.Tests.Routing;

/// <summary>The SubList's persistent literal map: a dictionary's answers, old versions untouched by changes.</summary>
public sealed class TokenMapTests
{
    [Fact]
    public void Random_sets_and_removes_answer_as_a_dictionary_and_leave_earlier_versions_unchanged()
    {
        var random = new Random(11);
        var map = TokenMap<string>.Empty;
        var model = new Dictionary<string, string>();
        var kept = new List<(TokenMap<string> Map, Dictionary<string, string> Model)>();
        for (var step = 0; step < 40_000; step++)
        {
            var token = "t" + random.Next(6_000);
            if (random.Next(3) == 0)
            {
                map = map.Remove(token);
                model.Remove(token);
            }
            else
            {
                var value = "v" + step;
                map = map.SetItem(token, value);
                model[token] = value;
            }

            if (step % 5_000 == 0)
            {
                kept.Add((map, new Dictionary<string, string>(model)));
            }
        }

        kept.Add((map, model));
        foreach (var (version, expected) in kept)
        {
            AssertSame(expected, version);
        }
    }

    [Fact]
    public void Tokens_whose_hashes_share_every_level_or_collide_outright_are_kept_apart_and_fold_back_when_removed()
    {
        // Hashes equal in their low 30 bits go down every level; equal hashes end in a collision list.
        string[] tokens = ["a", "b", "c", "d", "e"];
        int[] hashes = [0x0000_0001, 0x4000_0001, 0x4000_0001, unchecked((int)0x8000_0001), 0x4000_0001];
        var map = TokenMap<string>.Empty;
        for (var i = 0; i < tokens.Length; i++)
        {
            map = map.SetItem(tokens[i], hashes[i], tokens[i].ToUpperInvariant());
        }

        Assert.Equal(5, map.Count);
        for (var i = 0; i < tokens.Length; i++)
        {
            Assert.True(map.TryGetValue(tokens[i], hashes[i], out var value));
            Assert.Equal(tokens[i].ToUpperInvariant(), value);
        }

        Assert.False(map.TryGetValue("f", 0x4000_0001, out _)); // same hash, not there
        Assert.False(map.TryGetValue("a", 0x4000_0001, out _)); // there, under another hash

        map = map.SetItem("c", 0x4000_0001, "C2"); // replacing inside the collision list keeps the count
        Assert.Equal(5, map.Count);
        Assert.True(map.TryGetValue("c", 0x4000_0001, out var replaced));
        Assert.Equal("C2", replaced);

        var smaller = map.Remove("b", 0x4000_0001).Remove("e", 0x4000_0001).Remove("a", 0x0000_0001);
        Assert.Equal(2, smaller.Count);
        Assert.True(smaller.TryGetValue("c", 0x4000_0001, out _));
        Assert.True(smaller.TryGetValue("d", unchecked((int)0x8000_0001), out _));
        Assert.Same(smaller, smaller.Remove("zz", 0x4000_0001));
        Assert.Equal(0, smaller.Remove("c", 0x4000_0001).Remove("d", unchecked((int)0x8000_0001)).Count);
        Assert.Equal(5, map.Count); // the version before the removals is intact
    }

    private static void AssertSame(Dictionary<string, string> expected, TokenMap<string> map)
    {
        Assert.Equal(expected.Count, map.Count);
        foreach (var (token, value) in expected)
        {
            Assert.True(map.TryGetValue(token, out var found), token);
            Assert.Equal(value, found);
        }

        for (var i = 0; i < 6_000; i++)
        {
            var token = "t" + i;
            Assert.Equal(expected.ContainsKey(token), map.TryGetValue(token.AsSpan(), out _));
        }

        var values = new List<string>();
        map.CollectValues(values);
        Assert.Equal(expected.Values.Order(), values.Order());
    }
}
