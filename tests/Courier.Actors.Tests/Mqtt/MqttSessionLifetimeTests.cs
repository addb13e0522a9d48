using System.Net;
using System.Net.Sockets;
using System.Text;
using Akka.Actor;
using Courier.Actors.Mqtt;
using Courier.Actors.Server;
using Courier.Actors.Tests.Server;
using Xunit;

namespace Courier.Actors.Tests.Mqtt;

/// <summary>
/// A session that ended leaves nothing behind: its session actor and its entry in the session index
/// ($MQTT/sessions) go at once, not when its client id connects again. Counted through the index's
/// <see cref="MqttSessions.Protocol.CountSessions"/>: the actors alive, the ids a restart would recover.
/// </summary>
public sealed class MqttSessionLifetimeTests : IDisposable
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);
    private readonly string _storeDir = Directory.CreateTempSubdirectory("courier-mqtt-life-").FullName;

    private ServerOptions Options => new()
    {
        Host = "127.0.0.1",
        JetStream = true,
        StoreDir = _storeDir,
        Mqtt = new MqttOptions { Port = -1 },
    };

    [Fact]
    public async Task A_thousand_short_lived_clean_sessions_leave_no_session_actors()
    {
        await using var harness = await BrokerHarness.StartAsync(Options);
        const int Sessions = 1000;
        const int AtOnce = 50; // connections open together: bounded, so the test does not exhaust ports
        for (var first = 0; first < Sessions; first += AtOnce)
        {
            var batch = Enumerable.Range(first, AtOnce).Select(async i =>
            {
                using var client = await RawMqtt.ConnectAsync(harness.MqttPort);
                await client.SendAsync(RawMqtt.Connect311($"short-{i}", clean: true));
                Assert.Equal(0, await client.ReadConnAckCodeAsync());
                await client.SendAsync([0xE0, 0x00]); // DISCONNECT
            });
            await Task.WhenAll(batch);
        }

        var counts = await WaitForCountsAsync(harness, c => c.Actors == 0);
        Assert.Equal(new MqttSessions.Protocol.SessionCounts(0, 0), counts);
    }

    [Fact]
    public async Task A_session_whose_expiry_ran_out_goes_from_the_node_and_from_the_index_at_once()
    {
        await using (var harness = await BrokerHarness.StartAsync(Options))
        {
            // MQTT 5.0, clean start 0, Session Expiry Interval 1 s; a second session that never expires stays.
            using (var client = await RawMqtt.ConnectAsync(harness.MqttPort))
            {
                await client.SendAsync(RawMqtt.Connect5("expiring", sessionExpiry: 1));
                Assert.Equal(0, await client.ReadConnAckCodeAsync());
            }

            using (var keeper = await RawMqtt.ConnectAsync(harness.MqttPort))
            {
                await keeper.SendAsync(RawMqtt.Connect311("kept", clean: false));
                Assert.Equal(0, await keeper.ReadConnAckCodeAsync());
            }

            // The socket closes without DISCONNECT: the session outlives it for one second, then ends.
            var counts = await WaitForCountsAsync(harness, c => c.Persistent == 2);
            Assert.Equal(2, counts.Actors);
            counts = await WaitForCountsAsync(harness, c => c.Actors == 1 && c.Persistent == 1);
            Assert.Equal(new MqttSessions.Protocol.SessionCounts(1, 1), counts);
        }

        // After a restart only the kept session comes back.
        await using (var harness = await BrokerHarness.StartAsync(Options))
        {
            var counts = await WaitForCountsAsync(harness, c => c.Persistent == 1);
            Assert.Equal(new MqttSessions.Protocol.SessionCounts(1, 1), counts);
        }
    }

    [Fact]
    public async Task A_session_ended_by_session_expiry_interval_zero_at_disconnect_goes_at_once()
    {
        await using var harness = await BrokerHarness.StartAsync(Options);
        using (var client = await RawMqtt.ConnectAsync(harness.MqttPort))
        {
            await client.SendAsync(RawMqtt.Connect5("ends-at-disconnect", sessionExpiry: 3600));
            Assert.Equal(0, await client.ReadConnAckCodeAsync());
            await WaitForCountsAsync(harness, c => c.Persistent == 1);

            // DISCONNECT, reason 0, Session Expiry Interval 0: the session ends with this connection. [MQTT-3.14.2.2.2]
            await client.SendAsync([0xE0, 0x07, 0x00, 0x05, 0x11, 0, 0, 0, 0]);
        }

        var counts = await WaitForCountsAsync(harness, c => c.Actors == 0 && c.Persistent == 0);
        Assert.Equal(new MqttSessions.Protocol.SessionCounts(0, 0), counts);
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_storeDir, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    // Polls the index's counts until `done` holds or Patience runs out; returns the last counts either way.
    private static async Task<MqttSessions.Protocol.SessionCounts> WaitForCountsAsync(BrokerHarness harness, Func<MqttSessions.Protocol.SessionCounts, bool> done)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (true)
        {
            var counts = await harness.Broker.MqttSessions.Ask<MqttSessions.Protocol.SessionCounts>(MqttSessions.Protocol.CountSessions.Instance, TimeSpan.FromSeconds(5));
            if (done(counts) || DateTime.UtcNow > deadline)
            {
                return counts;
            }

            await Task.Delay(50);
        }
    }

    /// <summary>Just enough of an MQTT client: CONNECT bytes, the CONNACK's code.</summary>
    private sealed class RawMqtt : IDisposable
    {
        private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

        public static async Task<RawMqtt> ConnectAsync(int port)
        {
            var client = new RawMqtt();
            await client._socket.ConnectAsync(IPAddress.Loopback, port);
            return client;
        }

        public static byte[] Connect311(string clientId, bool clean)
        {
            var id = Encoding.UTF8.GetBytes(clientId);
            byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 4, clean ? (byte)0x02 : (byte)0x00, 0, 60, (byte)(id.Length >> 8), (byte)id.Length, .. id];
            return [0x10, (byte)body.Length, .. body];
        }

        // MQTT 5.0 CONNECT, clean start 0, with a Session Expiry Interval (property 0x11). [MQTT-3.1.2.11.2]
        public static byte[] Connect5(string clientId, uint sessionExpiry)
        {
            var id = Encoding.UTF8.GetBytes(clientId);
            byte[] body =
            [
                0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', 5, 0x00, 0, 60,
                5, 0x11, (byte)(sessionExpiry >> 24), (byte)(sessionExpiry >> 16), (byte)(sessionExpiry >> 8), (byte)sessionExpiry,
                (byte)(id.Length >> 8), (byte)id.Length, .. id,
            ];
            return [0x10, (byte)body.Length, .. body];
        }

        public async Task SendAsync(byte[] bytes) => await _socket.SendAsync(bytes, SocketFlags.None);

        // CONNACK: 0x20, remaining length, flags, code (3.1.1 return code or 5.0 reason code), [properties].
        public async Task<int> ReadConnAckCodeAsync()
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            var header = new byte[2];
            await ReadExactlyAsync(header, cts.Token);
            Assert.Equal(0x20, header[0]);
            var body = new byte[header[1]];
            await ReadExactlyAsync(body, cts.Token);
            return body[1];
        }

        public void Dispose() => _socket.Dispose();

        private async Task ReadExactlyAsync(byte[] buffer, CancellationToken token)
        {
            var read = 0;
            while (read < buffer.Length)
            {
                var n = await _socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None, token);
                if (n == 0)
                {
                    throw new Xunit.Sdk.XunitException("the server closed the connection");
                }

                read += n;
            }
        }
    }
}
