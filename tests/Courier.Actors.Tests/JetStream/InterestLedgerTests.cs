using System.Text;
using Courier.Actors.JetStream;
using Courier.Storage;
using Xunit;

namespace Courier.Actors.Tests.JetStream;

/// <summary>Interest retention's bookkeeping: who still needs which message, across consumers on their own threads.</summary>
public sealed class InterestLedgerTests
{
    private static IStreamStore StoreWith(params string[] subjects)
    {
        var store = StreamStores.CreateMemory(new StoreConfig { Name = "S" });
        foreach (var subject in subjects)
        {
            store.Append(Encoding.UTF8.GetBytes(subject), default, "x"u8);
        }

        return store;
    }

    [Fact]
    public void A_message_goes_once_every_consumer_whose_filter_matches_it_has_acknowledged_it()
    {
        var store = StoreWith("a", "b", "a");
        var ledger = new InterestLedger(store);
        var all = ledger.Join("all", []);
        var onlyB = ledger.Join("b", ["b"]);
        all.Begin(0, 0, _ => false);
        onlyB.Begin(0, 0, _ => false);

        all.Release([1, 2], 0);
        Assert.False(store.LoadMessage(1).Found); // only "all" wanted it
        Assert.True(store.LoadMessage(2).Found); // "b" still needs it

        onlyB.Release([2], 2);
        Assert.False(store.LoadMessage(2).Found);
        Assert.True(store.LoadMessage(3).Found);
        Assert.True(ledger.IsInteresting("a") && ledger.IsInteresting("b"));
    }

    [Fact]
    public void Two_consumers_acknowledging_the_same_messages_at_once_leave_none_behind()
    {
        const int Count = 20_000;
        var store = StoreWith(Enumerable.Repeat("m", Count).ToArray());
        var ledger = new InterestLedger(store);
        var first = ledger.Join("first", []);
        var second = ledger.Join("second", []);
        first.Begin(0, 0, _ => false);
        second.Begin(0, 0, _ => false);

        // Each acknowledges every message one at a time, explicit-ack style (the floor trails by one).
        Parallel.Invoke(
            () => AckOneByOne(first, Count),
            () => AckOneByOne(second, Count));

        Assert.Equal(0UL, store.State().Msgs);
    }

    private static void AckOneByOne(InterestParticipant participant, int count)
    {
        for (ulong seq = 1; seq <= (ulong)count; seq++)
        {
            participant.Release([seq], seq - 1);
        }
    }

    [Fact]
    public void A_consumer_that_has_not_started_keeps_what_it_may_need_and_releases_it_when_it_starts_past_it()
    {
        var store = StoreWith("a", "a");
        var ledger = new InterestLedger(store);
        var old = ledger.Join("old", []);
        old.Begin(0, 0, _ => false);
        var late = ledger.Join("late", []); // deliver new: it will start after 2

        old.Release([1, 2], 2);
        Assert.Equal(2UL, store.State().Msgs);

        late.Begin(2, 2, _ => false);
        Assert.Equal(0UL, store.State().Msgs);
    }

    [Fact]
    public void A_restarted_consumer_still_needs_only_what_it_had_not_acknowledged()
    {
        var store = StoreWith("a", "a", "a", "a");
        var ledger = new InterestLedger(store);
        var other = ledger.Join("other", []);
        var restarted = ledger.Join("restarted", []);
        other.Begin(0, 0, _ => false);

        // Delivered 1..4 before the restart, acknowledged 1 (the floor) and 3; 2 and 4 pending.
        restarted.Begin(1, 4, seq => seq is 2 or 4);
        other.Release([1, 2, 3, 4], 4);

        Assert.False(store.LoadMessage(1).Found);
        Assert.True(store.LoadMessage(2).Found);
        Assert.False(store.LoadMessage(3).Found);
        Assert.True(store.LoadMessage(4).Found);
    }

    [Fact]
    public void Leaving_drops_what_only_the_leaver_needed()
    {
        var store = StoreWith("a", "b", "a");
        var ledger = new InterestLedger(store);
        var all = ledger.Join("all", []);
        var onlyB = ledger.Join("b", ["b"]);
        all.Begin(0, 0, _ => false);
        onlyB.Begin(0, 0, _ => false);
        onlyB.Release([2], 2);

        ledger.Leave("all");
        Assert.Equal(0UL, store.State().Msgs);
        Assert.False(ledger.IsInteresting("a"));
        Assert.True(ledger.IsInteresting("b"));
    }
}
