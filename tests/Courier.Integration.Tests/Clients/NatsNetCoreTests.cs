using System.Security.Cryptography;
using System.Threading.Channels;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Clients;

/// <summary>Core NATS through the official .NET client (NATS.Client.Core from NATS.Net).</summary>
public abstract class NatsNetCoreTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const int MaxPayload = 1024 * 1024; // bytes: nats-server's default max_payload, accepted exactly

    private readonly TServer _server;

    protected NatsNetCoreTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Published_messages_reach_a_subscriber_on_another_connection_in_order()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var subConn = await NatsNetClient.ConnectAsync(_server.Url);
        await using var pubConn = await NatsNetClient.ConnectAsync(_server.Url);

        await using var sub = await subConn.SubscribeCoreAsync<string>($"{p}.greet", cancellationToken: cts.Token);
        await subConn.PingAsync(cts.Token); // the SUB is in effect before anyone publishes

        for (var i = 0; i < 50; i++)
        {
            await pubConn.PublishAsync($"{p}.greet", $"hello {i}", cancellationToken: cts.Token);
        }

        for (var i = 0; i < 50; i++)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            Assert.Equal($"{p}.greet", msg.Subject);
            Assert.Equal($"hello {i}", msg.Data);
        }
    }

    [Fact]
    public async Task Star_matches_exactly_one_token_and_greater_than_matches_one_or_more()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(_server.Url);

        await using var star = await nats.SubscribeCoreAsync<string>($"{p}.*.x", cancellationToken: cts.Token);
        await using var rest = await nats.SubscribeCoreAsync<string>($"{p}.a.>", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        string[] published = [$"{p}.a.x", $"{p}.b.x", $"{p}.a.b.x", $"{p}.a", $"{p}.a.y", $"{p}.x"];
        foreach (var subject in published)
        {
            await nats.PublishAsync(subject, subject, cancellationToken: cts.Token);
        }

        // An end marker each subscription matches: everything before it has arrived.
        await nats.PublishAsync($"{p}.a.x", "end", cancellationToken: cts.Token);

        Assert.Equal([$"{p}.a.x", $"{p}.b.x"], await ReadUntilEndAsync(star.Msgs, cts.Token));
        Assert.Equal([$"{p}.a.x", $"{p}.a.b.x", $"{p}.a.y"], await ReadUntilEndAsync(rest.Msgs, cts.Token));
    }

    [Fact]
    public async Task A_queue_group_delivers_each_message_to_exactly_one_member()
    {
        var p = Subjects.NewPrefix();
        const int Count = 300;
        const int Members = 3;
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);

        var connections = new List<NatsConnection>();
        var members = new List<(INatsSub<int> Work, INatsSub<string> End)>();
        try
        {
            for (var m = 0; m < Members; m++)
            {
                var conn = await NatsNetClient.ConnectAsync(_server.Url, $"member-{m}");
                connections.Add(conn);
                var work = await conn.SubscribeCoreAsync<int>($"{p}.work", queueGroup: "workers", cancellationToken: cts.Token);
                var end = await conn.SubscribeCoreAsync<string>($"{p}.end", cancellationToken: cts.Token);
                members.Add((work, end));
                await conn.PingAsync(cts.Token);
            }

            await using var pub = await NatsNetClient.ConnectAsync(_server.Url, "publisher");
            for (var i = 0; i < Count; i++)
            {
                await pub.PublishAsync($"{p}.work", i, cancellationToken: cts.Token);
            }

            // Every member gets the end marker; on its connection it comes after all the work sent to it.
            await pub.PublishAsync($"{p}.end", "end", cancellationToken: cts.Token);

            var seen = new List<int>();
            var perMember = new List<int>();
            foreach (var (work, end) in members)
            {
                Assert.Equal("end", (await end.Msgs.ReadAsync(cts.Token)).Data);
                var before = seen.Count;
                while (work.Msgs.TryRead(out var msg))
                {
                    seen.Add(msg.Data);
                }

                perMember.Add(seen.Count - before);
            }

            seen.Sort();
            Assert.Equal(Enumerable.Range(0, Count), seen); // all of them, none twice
            Assert.True(perMember.Count(n => n > 0) >= 2, $"one member took everything: [{string.Join(", ", perMember)}]");
        }
        finally
        {
            foreach (var (work, end) in members)
            {
                await work.DisposeAsync();
                await end.DisposeAsync();
            }

            foreach (var conn in connections)
            {
                await conn.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task A_request_gets_the_responders_reply()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var service = await NatsNetClient.ConnectAsync(_server.Url, "service");
        await using var client = await NatsNetClient.ConnectAsync(_server.Url, "client");

        await using var sub = await service.SubscribeCoreAsync<string>($"{p}.upper", cancellationToken: cts.Token);
        await service.PingAsync(cts.Token);
        var responder = Task.Run(
            async () =>
            {
                for (var i = 0; i < 3; i++)
                {
                    var request = await sub.Msgs.ReadAsync(cts.Token);
                    await request.ReplyAsync(request.Data!.ToUpperInvariant(), cancellationToken: cts.Token);
                }
            },
            cts.Token);

        foreach (var word in new[] { "one", "two", "three" })
        {
            var reply = await client.RequestAsync<string, string>($"{p}.upper", word, cancellationToken: cts.Token);
            Assert.Equal(word.ToUpperInvariant(), reply.Data);
        }

        await responder;
    }

    [Fact]
    public async Task Headers_arrive_with_every_value_and_the_payload()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(_server.Url);

        await using var sub = await nats.SubscribeCoreAsync<string>($"{p}.h", cancellationToken: cts.Token);
        await nats.PingAsync(cts.Token);

        var headers = new NatsHeaders
        {
            ["X-Id"] = "42",
            ["X-Many"] = new[] { "a", "b" },
        };
        await nats.PublishAsync($"{p}.h", "body", headers: headers, cancellationToken: cts.Token);
        await nats.PublishAsync($"{p}.h", string.Empty, headers: new NatsHeaders { ["X-Only"] = "headers" }, cancellationToken: cts.Token);

        var first = await sub.Msgs.ReadAsync(cts.Token);
        Assert.Equal("body", first.Data);
        Assert.NotNull(first.Headers);
        Assert.Equal("42", first.Headers["X-Id"].ToString());
        Assert.Equal(new[] { "a", "b" }, (IEnumerable<string?>)first.Headers["X-Many"]);

        var second = await sub.Msgs.ReadAsync(cts.Token);
        Assert.True(string.IsNullOrEmpty(second.Data));
        Assert.Equal("headers", second.Headers?["X-Only"].ToString());
    }

    [Fact]
    public async Task A_request_nobody_listens_to_fails_at_once_with_no_responders()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var nats = await NatsNetClient.ConnectAsync(_server.Url);

        // The 503 status comes from the server; without it the request would wait for its timeout.
        await Assert.ThrowsAsync<NatsNoRespondersException>(
            async () => await nats.RequestAsync<string, string>($"{p}.nobody", "anyone?", cancellationToken: cts.Token));
    }

    [Fact]
    public async Task A_1_MB_payload_round_trips_through_a_request_and_its_reply_byte_for_byte()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var service = await NatsNetClient.ConnectAsync(_server.Url, "echo");
        await using var client = await NatsNetClient.ConnectAsync(_server.Url, "client");
        Assert.Equal(MaxPayload, client.ServerInfo!.MaxPayload);

        var payload = RandomNumberGenerator.GetBytes(MaxPayload);
        await using var sub = await service.SubscribeCoreAsync<byte[]>($"{p}.echo", cancellationToken: cts.Token);
        await service.PingAsync(cts.Token);
        var echo = Task.Run(
            async () =>
            {
                var request = await sub.Msgs.ReadAsync(cts.Token);
                Assert.Equal(payload, request.Data); // the request arrived whole
                await request.ReplyAsync(request.Data, cancellationToken: cts.Token);
            },
            cts.Token);

        var reply = await client.RequestAsync<byte[], byte[]>($"{p}.echo", payload, cancellationToken: cts.Token);
        Assert.Equal(payload, reply.Data);
        await echo;
    }

    [Fact]
    public async Task Several_1_MB_payloads_published_back_to_back_arrive_whole_and_in_order()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var subConn = await NatsNetClient.ConnectAsync(_server.Url);
        await using var pubConn = await NatsNetClient.ConnectAsync(_server.Url);

        await using var sub = await subConn.SubscribeCoreAsync<byte[]>($"{p}.big", cancellationToken: cts.Token);
        await subConn.PingAsync(cts.Token);

        var payloads = Enumerable.Range(0, 4).Select(_ => RandomNumberGenerator.GetBytes(MaxPayload)).ToList();
        foreach (var payload in payloads)
        {
            await pubConn.PublishAsync($"{p}.big", payload, cancellationToken: cts.Token);
        }

        foreach (var payload in payloads)
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            Assert.Equal(payload, msg.Data);
        }
    }

    private static async Task<List<string>> ReadUntilEndAsync(ChannelReader<NatsMsg<string>> msgs, CancellationToken ct)
    {
        var subjects = new List<string>();
        while (true)
        {
            var msg = await msgs.ReadAsync(ct);
            if (msg.Data == "end")
            {
                return subjects;
            }

            subjects.Add(msg.Subject);
        }
    }
}

[Trait("server", "nats-server")]
public sealed class NatsNetCoreTests_NatsServer(NatsServerFixture server) : NatsNetCoreTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetCoreTests_Courier(CourierFixture server) : NatsNetCoreTests<CourierFixture>(server);
