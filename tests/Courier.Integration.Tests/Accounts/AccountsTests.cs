using System.Threading.Channels;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Accounts;

/// <summary>
/// Accounts as nats-server 2.9 has them, with NATS.Net against a server running
/// <see cref="AccountConfig.Shared"/>: isolation, stream and service exports and imports.
/// </summary>
public abstract class AccountsTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected AccountsTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task A_message_reaches_only_subscribers_of_the_publishers_account()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var a2 = await AccountConfig.ConnectAsync(_server, "a2");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var g = await AccountConfig.ConnectAsync(_server, "g");

        await using var inA = await a.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await using var inAQueue = await a.SubscribeCoreAsync<string>($"{p}.x", queueGroup: "q", cancellationToken: cts.Token);
        await using var inB = await b.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await using var inBQueue = await b.SubscribeCoreAsync<string>($"{p}.x", queueGroup: "q", cancellationToken: cts.Token);
        await using var inG = await g.SubscribeCoreAsync<string>($"{p}.>", cancellationToken: cts.Token);
        await a.PingAsync(cts.Token);
        await b.PingAsync(cts.Token);
        await g.PingAsync(cts.Token);

        await a2.PublishAsync($"{p}.x", "from a2", cancellationToken: cts.Token);
        await b.PublishAsync($"{p}.x", "from b", cancellationToken: cts.Token);
        await g.PublishAsync($"{p}.x", "from g", cancellationToken: cts.Token);

        // Each account's subscribers (plain and its queue group) get their own account's message only.
        Assert.Equal("from a2", (await inA.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("from a2", (await inAQueue.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("from b", (await inB.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("from b", (await inBQueue.Msgs.ReadAsync(cts.Token)).Data);
        Assert.Equal("from g", (await inG.Msgs.ReadAsync(cts.Token)).Data);

        // A round trip more: nothing else arrived.
        await a2.PublishAsync($"{p}.end", "end", cancellationToken: cts.Token);
        Assert.Equal("end", (await inA.Msgs.ReadAsync(cts.Token)).Data);
        await b.PublishAsync($"{p}.end", "end", cancellationToken: cts.Token);
        Assert.Equal("end", (await inB.Msgs.ReadAsync(cts.Token)).Data);
        Assert.False(inAQueue.Msgs.TryRead(out _));
        Assert.False(inBQueue.Msgs.TryRead(out _));
    }

    [Fact]
    public async Task A_request_gets_no_responders_when_only_another_account_has_a_responder()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var responder = await a.SubscribeCoreAsync<string>($"{p}.req", cancellationToken: cts.Token);
        await a.PingAsync(cts.Token);

        await Assert.ThrowsAsync<NatsNoRespondersException>(async () =>
            await b.RequestAsync<string, string>($"{p}.req", "hi", cancellationToken: cts.Token));
    }

    [Fact]
    public async Task A_stream_import_with_a_prefix_delivers_the_exporters_messages_under_the_prefix()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var exact = await b.SubscribeCoreAsync<string>($"from_a.feed.{p}", cancellationToken: cts.Token);
        await using var wide = await b.SubscribeCoreAsync<string>("from_a.>", cancellationToken: cts.Token);
        await using var queued = await b.SubscribeCoreAsync<string>($"from_a.feed.{p}", queueGroup: "workers", cancellationToken: cts.Token);
        await b.PingAsync(cts.Token);

        await a.PublishAsync($"feed.{p}", "one", cancellationToken: cts.Token);

        foreach (var sub in new[] { exact, wide, queued })
        {
            var msg = await sub.Msgs.ReadAsync(cts.Token);
            Assert.Equal($"from_a.feed.{p}", msg.Subject);
            Assert.Equal("one", msg.Data);
        }
    }

    [Fact]
    public async Task A_private_stream_export_reaches_the_account_it_names_and_a_mapped_import_its_subject()
    {
        var p = Subjects.NewPrefix();
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var c = await AccountConfig.ConnectAsync(_server, "c");
        await using var inB = await b.SubscribeCoreAsync<string>($"private.{p}", cancellationToken: cts.Token);
        await using var inC = await c.SubscribeCoreAsync<string>("mapped.here", cancellationToken: cts.Token);
        await using var cPrivate = await c.SubscribeCoreAsync<string>($"private.{p}", cancellationToken: cts.Token);
        await b.PingAsync(cts.Token);
        await c.PingAsync(cts.Token);

        await a.PublishAsync($"private.{p}", "secret", cancellationToken: cts.Token);
        await a.PublishAsync("feed.mapped", "mapped", cancellationToken: cts.Token);

        var secret = await inB.Msgs.ReadAsync(cts.Token);
        Assert.Equal(($"private.{p}", "secret"), (secret.Subject, secret.Data));
        var mapped = await inC.Msgs.ReadAsync(cts.Token);
        Assert.Equal(("mapped.here", "mapped"), (mapped.Subject, mapped.Data));
        Assert.False(cPrivate.Msgs.TryRead(out _));
    }

    [Fact]
    public async Task A_service_import_forwards_a_request_to_the_exporter_and_its_reply_back()
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        var seen = Channel.CreateUnbounded<(string Subject, string? Reply)>();
        await using var service = await a.SubscribeCoreAsync<string>("svc.echo", cancellationToken: cts.Token);
        await a.PingAsync(cts.Token);
        var responder = Task.Run(
            async () =>
            {
                await foreach (var msg in service.Msgs.ReadAllAsync(cts.Token))
                {
                    await seen.Writer.WriteAsync((msg.Subject, msg.ReplyTo), cts.Token);
                    await msg.ReplyAsync("echo: " + msg.Data, cancellationToken: cts.Token);
                }
            },
            cts.Token);

        var reply = await b.RequestAsync<string, string>("echo", "ping", cancellationToken: cts.Token);
        Assert.Equal("echo: ping", reply.Data);

        // The exporter sees its own subject and a reply subject of its account (_R_.), not the requester's inbox.
        var request = await seen.Reader.ReadAsync(cts.Token);
        Assert.Equal("svc.echo", request.Subject);
        Assert.StartsWith("_R_.", request.Reply, StringComparison.Ordinal);
        Assert.False(responder.IsFaulted);
    }

    [Fact]
    public async Task A_streamed_service_export_delivers_every_response_of_a_request()
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var service = await a.SubscribeCoreAsync<string>("svc.many", cancellationToken: cts.Token);
        await a.PingAsync(cts.Token);
        var responder = Task.Run(
            async () =>
            {
                var msg = await service.Msgs.ReadAsync(cts.Token);
                for (var i = 0; i < 3; i++)
                {
                    await msg.ReplyAsync($"part {i}", cancellationToken: cts.Token);
                }
            },
            cts.Token);

        var inbox = b.NewInbox();
        await using var replies = await b.SubscribeCoreAsync<string>(inbox, cancellationToken: cts.Token);
        await b.PingAsync(cts.Token);
        await b.PublishAsync("svc.many", "go", replyTo: inbox, cancellationToken: cts.Token);
        for (var i = 0; i < 3; i++)
        {
            Assert.Equal($"part {i}", (await replies.Msgs.ReadAsync(cts.Token)).Data);
        }

        await responder;
    }

    [Fact]
    public async Task A_single_response_service_forwards_only_the_first_response()
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var a = await AccountConfig.ConnectAsync(_server, "a");
        await using var b = await AccountConfig.ConnectAsync(_server, "b");
        await using var service = await a.SubscribeCoreAsync<string>("svc.only_b", cancellationToken: cts.Token);
        await a.PingAsync(cts.Token);
        var responder = Task.Run(
            async () =>
            {
                var msg = await service.Msgs.ReadAsync(cts.Token);
                await msg.ReplyAsync("first", cancellationToken: cts.Token);
                await msg.ReplyAsync("second", cancellationToken: cts.Token);
            },
            cts.Token);

        var inbox = b.NewInbox();
        await using var replies = await b.SubscribeCoreAsync<string>(inbox, cancellationToken: cts.Token);
        await b.PingAsync(cts.Token);
        await b.PublishAsync("svc.only_b", "go", replyTo: inbox, cancellationToken: cts.Token);
        Assert.Equal("first", (await replies.Msgs.ReadAsync(cts.Token)).Data);
        await responder;
        await a.PingAsync(cts.Token);

        // The second response found no mapping any more: a later request's reply is the next thing to arrive.
        var next = Task.Run(
            async () =>
            {
                var msg = await service.Msgs.ReadAsync(cts.Token);
                await msg.ReplyAsync("third", cancellationToken: cts.Token);
            },
            cts.Token);
        await b.PublishAsync("svc.only_b", "again", replyTo: inbox, cancellationToken: cts.Token);
        Assert.Equal("third", (await replies.Msgs.ReadAsync(cts.Token)).Data);
        await next;
    }
}

[Trait("server", "nats-server")]
public sealed class AccountsTests_NatsServer(NatsServerAccountsFixture server) : AccountsTests<NatsServerAccountsFixture>(server);

[Trait("server", "courier")]
public sealed class AccountsTests_Courier(CourierAccountsFixture server) : AccountsTests<CourierAccountsFixture>(server);
