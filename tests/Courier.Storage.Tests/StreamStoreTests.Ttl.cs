using Xunit;

namespace Courier.Storage.Tests;

/// <summary>Per-message TTLs (<c>allow_msg_ttl</c>, the <c>Nats-TTL</c> header): the expiry index, across a reopen too.</summary>
public abstract partial class StreamStoreTests
{
    private const long Second = 1_000_000_000; // ns

    private static string Ttl(string value) => $"NATS/1.0\r\nNats-TTL: {value}\r\n\r\n";

    [Fact]
    public void Messages_with_a_ttl_are_listed_once_their_ttl_has_run_out_earliest_first_and_the_index_survives_a_reopen()
    {
        var store = Create(new StoreConfig { Name = "TTL", AllowMsgTtl = true });
        const long t0 = 1_700_000_000 * Second;
        Assert.True(Put(store, "a", headers: Ttl("10s"), timestamp: t0).Ok);        // 1: expires t0+10s
        Assert.True(Put(store, "b", headers: Ttl("2"), timestamp: t0 + Second).Ok); // 2: t0+3s (a bare number of seconds)
        PutOk(store, "c", timestamp: t0 + (2 * Second));                             // 3: no TTL
        Assert.True(Put(store, "d", headers: Ttl("never"), timestamp: t0 + (3 * Second)).Ok); // 4: never
        Assert.True(Put(store, "e", headers: Ttl("1m"), timestamp: t0 + (4 * Second)).Ok);    // 5: t0+64s
        store.Flush();
        store = Reopen(store);

        Assert.Empty(store.ExpiredByTtl(t0 + (2 * Second), 100));
        Assert.Equal([(2UL, "b")], store.ExpiredByTtl(t0 + (3 * Second), 100).Select(e => (e.Sequence, e.Subject)));
        Assert.Equal([2UL, 1UL], store.ExpiredByTtl(t0 + (10 * Second), 100).Select(e => e.Sequence));
        Assert.Equal([2UL], store.ExpiredByTtl(t0 + (10 * Second), 1).Select(e => e.Sequence));

        // Listed, not removed: the owner removes them; a removed one is not listed again.
        Assert.True(store.RemoveMessage(2));
        Assert.Equal([1UL, 5UL], store.ExpiredByTtl(long.MaxValue, 100).Select(e => e.Sequence));
        store.Flush();
        store = Reopen(store);
        Assert.Equal([1UL, 5UL], store.ExpiredByTtl(long.MaxValue, 100).Select(e => e.Sequence));
        Assert.Equal(4UL, store.State().Msgs);
    }

    [Fact]
    public void A_ttl_of_never_outlives_max_age_while_the_old_messages_around_it_expire()
    {
        var store = Create(new StoreConfig { Name = "TTL", AllowMsgTtl = true, MaxAge = TimeSpan.FromSeconds(10) });
        const long t0 = 1_700_000_000 * Second;
        Assert.True(Put(store, "keep", headers: Ttl("never"), timestamp: t0).Ok); // 1
        PutOk(store, "old", timestamp: t0 + Second);                               // 2
        Assert.True(Put(store, "keep", headers: Ttl("NEVER"), timestamp: t0 + (2 * Second)).Ok); // 3
        PutOk(store, "old", timestamp: t0 + (3 * Second));                         // 4
        PutOk(store, "young", timestamp: t0 + (20 * Second));                      // 5
        store.Flush();
        store = Reopen(store);

        Assert.Equal(2UL, store.ExpireByAge(t0 + (15 * Second)));
        Assert.Equal([1UL, 3UL, 5UL], Sequences(store));
        Assert.Empty(store.ExpiredByTtl(long.MaxValue, 100));
    }

    [Fact]
    public void Aged_out_lists_what_max_age_would_remove_without_removing_it_and_passes_over_never()
    {
        var store = Create(new StoreConfig { Name = "TTL", AllowMsgTtl = true, MaxAge = TimeSpan.FromSeconds(10) });
        const long t0 = 1_700_000_000 * Second;
        PutOk(store, "a", timestamp: t0);                                                   // 1
        Assert.True(Put(store, "b", headers: Ttl("never"), timestamp: t0).Ok);              // 2
        PutOk(store, "c", timestamp: t0 + Second);                                          // 3
        PutOk(store, "d", timestamp: t0 + (30 * Second));                                   // 4
        store.Flush();
        store = Reopen(store);

        Assert.Empty(store.AgedOut(t0 + (5 * Second), 100));
        Assert.Equal([(1UL, "a"), (3UL, "c")], store.AgedOut(t0 + (12 * Second), 100).Select(e => (e.Sequence, e.Subject)));
        Assert.Equal([1UL], store.AgedOut(t0 + (12 * Second), 1).Select(e => e.Sequence));
        Assert.Equal(4UL, store.State().Msgs);
    }

    [Fact]
    public void Without_allow_msg_ttl_the_header_is_nothing_to_the_store()
    {
        var store = Create(new StoreConfig { Name = "PLAIN", MaxAge = TimeSpan.FromSeconds(10) });
        const long t0 = 1_700_000_000 * Second;
        Assert.True(Put(store, "a", headers: Ttl("1s"), timestamp: t0).Ok);
        Assert.True(Put(store, "b", headers: Ttl("never"), timestamp: t0).Ok);
        Assert.Empty(store.ExpiredByTtl(long.MaxValue, 100));
        Assert.Equal(2UL, store.ExpireByAge(t0 + (11 * Second)));
    }

    [Fact]
    public void A_purge_empties_the_index()
    {
        var store = Create(new StoreConfig { Name = "TTL", AllowMsgTtl = true });
        Assert.True(Put(store, "a", headers: Ttl("1s"), timestamp: Second).Ok);
        store.Purge();
        Assert.True(Put(store, "a", headers: Ttl("5s"), timestamp: 2 * Second).Ok);
        Assert.Equal([2UL], store.ExpiredByTtl(long.MaxValue, 100).Select(e => e.Sequence));
    }

    private static List<ulong> Sequences(IStreamStore store)
    {
        var sequences = new List<ulong>();
        for (var r = store.LoadNextMessage(null, 0); r.Found; r = store.LoadNextMessage(null, r.Message!.Sequence + 1))
        {
            sequences.Add(r.Message!.Sequence);
        }

        return sequences;
    }
}
