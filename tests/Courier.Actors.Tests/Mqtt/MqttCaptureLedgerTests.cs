using Courier.Actors.Connections;
using Courier.Actors.Mqtt;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.Mqtt;

/// <summary>The barrier a QoS 1/2 PUBACK waits behind until the persistent sessions journaled what they captured.</summary>
public sealed class MqttCaptureLedgerTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Without_a_capture_client_the_barrier_is_open()
    {
        var ledger = new MqttCaptureLedger();

        await ledger.WaitForCapturedAsync().WaitAsync(Bound);
    }

    [Fact]
    public async Task The_barrier_waits_until_every_message_captured_before_it_is_resolved()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections, InProcessRole.MqttCapture);
        var ledger = new MqttCaptureLedger();
        ledger.Attach(client);
        var first = ledger.Capture();
        var second = ledger.Capture();

        var barrier = ledger.WaitForCapturedAsync();
        await client.FlushAsync(); // the barrier's own PING was answered before this one
        ledger.Resolve([second]);
        Assert.False(barrier.IsCompleted, "the barrier opened while an earlier capture was not journaled");

        ledger.Resolve([first]);
        await barrier.WaitAsync(Bound);
    }

    [Fact]
    public async Task With_nothing_unresolved_the_barrier_opens_after_the_capture_clients_round_trip()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await using var client = new InProcessClient(harness.Broker.Connections, InProcessRole.MqttCapture);
        var ledger = new MqttCaptureLedger();
        ledger.Attach(client);
        ledger.Resolve([ledger.Capture()]);

        await ledger.WaitForCapturedAsync().WaitAsync(Bound);
    }
}
