using Courier.Storage.Internal;
using Xunit;

namespace Courier.Storage.Tests.Internal;

/// <summary>The chunked sequence table under appends, front trims, gaps and tail clears.</summary>
public sealed class SeqTableTests
{
    [Fact]
    public void Entries_survive_growth_trims_and_wraparound()
    {
        var table = new SeqTable<ulong>();
        ulong first = 1;
        for (ulong seq = 1; seq <= 200_000; seq++)
        {
            table.GetOrAdd(seq) = seq * 3;
            if (seq % 1000 == 0)
            {
                first = seq - 5000 > first ? seq - 5000 : first;
                table.TrimBelow(first);
            }
        }

        for (var seq = first; seq <= 200_000; seq++)
        {
            Assert.True(table.Contains(seq));
            Assert.Equal(seq * 3, table[seq]);
        }

        Assert.False(table.Contains(first - 2000));
        Assert.False(table.Contains(300_000));
    }

    [Fact]
    public void Gaps_stay_unallocated_and_earlier_sequences_can_be_added()
    {
        var table = new SeqTable<int>();
        table.GetOrAdd(5_000_000) = 1;
        table.GetOrAdd(1_000) = 2;
        table.GetOrAdd(10_000_000) = 3;
        Assert.Equal(1, table.Get(5_000_000));
        Assert.Equal(2, table.Get(1_000));
        Assert.Equal(3, table.Get(10_000_000));
        Assert.False(table.Contains(7_000_000));
        Assert.Equal(0, table.Get(7_000_000));
    }

    [Fact]
    public void Clear_from_drops_the_tail_only()
    {
        var table = new SeqTable<int>();
        for (ulong seq = 1; seq <= 5000; seq++)
        {
            table.GetOrAdd(seq) = (int)seq;
        }

        table.ClearFrom(2500);
        Assert.Equal(2499, table.Get(2499));
        Assert.Equal(0, table.Get(2500));
        Assert.False(table.Contains(4000));
        table.GetOrAdd(4000) = 7;
        Assert.Equal(7, table.Get(4000));
    }
}
