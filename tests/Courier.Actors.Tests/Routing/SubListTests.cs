using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Routing;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;
using Xunit;

namespace Courier.Actors.Tests.Routing;

/// <summary>The subject trie: matches as nats-server's subject rules say, and a wide level costs a change little.</summary>
public sealed class SubListTests : IAsyncLifetime
{
    private readonly Broker _broker = new(new ServerOptions { Host = "127.0.0.1" });
    private ClientConnection _client = null!;
    private int _sid;

    public async Task InitializeAsync()
    {
        await _broker.StartAsync();
        _client = new ClientConnection(_broker.NatsClients, new MemoryStream(), socket: null, _broker.NextClientId(), ActorRefs.Nobody);
    }

    public async Task DisposeAsync() => await _broker.DisposeAsync();

    [Fact]
    public void Random_inserts_and_removes_match_every_subject_as_the_subject_rules_say()
    {
        var random = new Random(5);
        string[] tokens = ["a", "b", "c", "*", ">"];
        var list = SubList.Empty;
        var held = new List<Subscription>();
        for (var step = 0; step < 3_000; step++)
        {
            if (held.Count > 0 && random.Next(4) == 0)
            {
                var at = random.Next(held.Count);
                list = list.Remove(held[at]);
                held.RemoveAt(at);
                continue;
            }

            var length = random.Next(1, 4);
            var subject = string.Join('.', Enumerable.Range(0, length).Select(i => tokens[random.Next(i == length - 1 ? 5 : 4)]))
                + (random.Next(2) == 0 ? "" : "." + random.Next(400)); // literal tails make wide levels
            subject = subject.Contains('>', StringComparison.Ordinal) && !subject.EndsWith('>') ? subject[..(subject.IndexOf('>') + 1)] : subject;
            var sub = NewSubscription(subject, queue: random.Next(5) == 0 ? "q" : null);
            list = list.Insert(sub);
            held.Add(sub);
        }

        Assert.Equal(held.Count, list.Count);
        for (var probe = 0; probe < 2_000; probe++)
        {
            var length = random.Next(1, 5);
            var literal = string.Join('.', Enumerable.Range(0, length).Select(_ => random.Next(3) switch { 0 => "a", 1 => "b", _ => random.Next(400).ToString(System.Globalization.CultureInfo.InvariantCulture) }));
            var plain = new List<Subscription>();
            var queued = new List<Subscription>();
            list.Match(literal, plain, queued);
            var expected = held.Where(s => SubjectRules.Matches(literal, s.Subject)).ToHashSet();
            Assert.Equal(expected.Where(s => s.Queue is null).ToHashSet(), plain.ToHashSet());
            Assert.Equal(expected.Where(s => s.Queue is not null).ToHashSet(), queued.ToHashSet());
        }

        var all = new List<Subscription>();
        list.CollectAll(all);
        Assert.Equal(held.ToHashSet(), all.ToHashSet());
    }

    [Fact]
    public void Adding_and_removing_one_subscription_beside_5000_literal_siblings_allocates_little()
    {
        // Each client's inbox sits beside every other client's (_INBOX.<id>.*): the level is as wide
        // as the number of clients. Copying that level per change made 5,000 SUBs allocate 300 MB.
        var list = SubList.Empty;
        for (var i = 0; i < 5_000; i++)
        {
            list = list.Insert(NewSubscription($"_INBOX.client{i}.*"));
        }

        var one = NewSubscription("_INBOX.newcomer.*");
        list.Insert(one); // warm up
        var before = GC.GetAllocatedBytesForCurrentThread();
        var added = list.Insert(one);
        var removed = added.Remove(one);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(5_001, added.Count);
        Assert.Equal(5_000, removed.Count);
        Assert.True(allocated < 8 * 1024, $"{allocated} bytes allocated for one insert and one remove beside 5,000 siblings");
    }

    private Subscription NewSubscription(string subject, string? queue = null)
    {
        var sid = Encoding.ASCII.GetBytes((++_sid).ToString(System.Globalization.CultureInfo.InvariantCulture));
        return new Subscription(_client, _client.Account, subject, queue, sid, shard: 0);
    }
}
