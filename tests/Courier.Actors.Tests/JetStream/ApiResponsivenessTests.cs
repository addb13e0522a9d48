using Courier.Actors.Tests.Server;
using Xunit;
using static Courier.Actors.Tests.JetStream.JetStreamWire;

namespace Courier.Actors.Tests.JetStream;

/// <summary>
/// The JetStream API actor never waits for a stream inside its own turn: while a stream cannot answer
/// (here: the I/O dispatcher it runs on is held), requests that do not need that stream are answered at
/// once, and the one that needs it is answered when the stream is free again.
/// </summary>
public sealed class ApiResponsivenessTests : JetStreamTestKit
{
    public ApiResponsivenessTests()
        : base("courier.io-dispatcher.dedicated-thread-pool.thread-count = 1")
    {
    }

    [Fact]
    public async Task A_stream_that_cannot_answer_does_not_hold_up_api_requests_that_do_not_need_it()
    {
        await using var harness = await BrokerHarness.StartAsync(Sys, Options);
        using var c = await ConnectRequesterAsync(harness);
        await RequestAsync(c, "$JS.API.STREAM.CREATE.SLOW", """{"name":"SLOW","subjects":["slow.>"]}""");

        // Hold the I/O dispatcher's only thread: the stream actor can process nothing meanwhile.
        using var release = await HoldIoDispatcherAsync();

        // STREAM.LIST needs the stream's info: its answer waits. STREAM.NAMES and a request about a
        // stream that does not exist do not: they are answered while the list is pending.
        await c.SendAsync("PUB $JS.API.STREAM.LIST _INBOX.t.list 0\r\n\r\n");
        await c.SendAsync("PUB $JS.API.STREAM.NAMES _INBOX.t.names 0\r\n\r\nPUB $JS.API.STREAM.INFO.NONE _INBOX.t.none 0\r\n\r\n");
        Assert.StartsWith("MSG _INBOX.t.names 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Contains("\"streams\":[\"SLOW\"]", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.StartsWith("MSG _INBOX.t.none 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Contains("\"code\":404", await c.ReadLineAsync(), StringComparison.Ordinal);

        release.Dispose();
        Assert.StartsWith("MSG _INBOX.t.list 1 ", await c.ReadLineAsync(), StringComparison.Ordinal);
        Assert.Contains("\"name\":\"SLOW\"", await c.ReadLineAsync(), StringComparison.Ordinal);
    }
}
