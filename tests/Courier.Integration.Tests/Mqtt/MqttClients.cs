using System.Buffers;
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading.Channels;
using MQTTnet;
using MQTTnet.Formatter;
using MQTTnet.Protocol;

namespace Courier.Integration.Tests.Mqtt;

/// <summary>A message an MQTT client received.</summary>
public sealed record MqttReceived(string Topic, string Payload, int QoS, bool Retain);

/// <summary>An MQTTnet 3.1.1 client that queues what it receives.</summary>
public sealed class MqttTestClient : IAsyncDisposable
{
    /// <summary>Bound for every wait in a test.</summary>
    public static readonly TimeSpan TestTimeout = TimeSpan.FromSeconds(15);

    private readonly Channel<MqttReceived> _received = Channel.CreateUnbounded<MqttReceived>();

    private MqttTestClient(IMqttClient client)
    {
        Client = client;
        client.ApplicationMessageReceivedAsync += e =>
        {
            var message = e.ApplicationMessage;
            _received.Writer.TryWrite(new MqttReceived(
                message.Topic, Encoding.UTF8.GetString(message.Payload.ToArray()), (int)message.QualityOfServiceLevel, message.Retain));
            return Task.CompletedTask;
        };
    }

    public IMqttClient Client { get; }

    /// <summary>The CONNACK's session present flag.</summary>
    public bool SessionPresent { get; private set; }

    /// <summary>Connects with MQTT 3.1.1; <paramref name="configure"/> adds options (will, credentials, ...).</summary>
    public static Task<MqttTestClient> ConnectAsync(int port, string clientId, Action<MqttClientOptionsBuilder>? configure = null, bool cleanSession = true) =>
        ConnectAsync(builder => builder.WithTcpServer("127.0.0.1", port), clientId, configure, cleanSession);

    /// <summary>Connects with MQTT 3.1.1 over the transport <paramref name="transport"/> sets (e.g. <c>WithWebSocketServer</c>).</summary>
    public static async Task<MqttTestClient> ConnectAsync(Action<MqttClientOptionsBuilder> transport, string clientId, Action<MqttClientOptionsBuilder>? configure = null, bool cleanSession = true)
    {
        ArgumentNullException.ThrowIfNull(transport);
        var client = new MqttClientFactory().CreateMqttClient();
        var builder = new MqttClientOptionsBuilder();
        transport(builder);
        builder
            .WithProtocolVersion(MqttProtocolVersion.V311)
            .WithClientId(clientId)
            .WithCleanSession(cleanSession)
            .WithTimeout(TestTimeout);
        configure?.Invoke(builder);
        var wrapper = new MqttTestClient(client);
        using var cts = new CancellationTokenSource(TestTimeout);
        var result = await client.ConnectAsync(builder.Build(), cts.Token);
        wrapper.SessionPresent = result.IsSessionPresent;
        return wrapper;
    }

    public async Task SubscribeAsync(string filter, MqttQualityOfServiceLevel qos = MqttQualityOfServiceLevel.AtMostOnce)
    {
        using var cts = new CancellationTokenSource(TestTimeout);
        var result = await Client.SubscribeAsync(
            new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(qos)).Build(), cts.Token);
        Assert.All(result.Items, item => Assert.True((int)item.ResultCode <= 2, $"SUBACK for {filter}: {item.ResultCode}"));
    }

    public async Task PublishAsync(string topic, string payload, MqttQualityOfServiceLevel qos = MqttQualityOfServiceLevel.AtMostOnce, bool retain = false)
    {
        using var cts = new CancellationTokenSource(TestTimeout);
        var result = await Client.PublishAsync(
            new MqttApplicationMessageBuilder().WithTopic(topic).WithPayload(payload).WithQualityOfServiceLevel(qos).WithRetainFlag(retain).Build(), cts.Token);
        Assert.True(result.IsSuccess, $"publish to {topic}: {result.ReasonCode}");
    }

    /// <summary>The next message received, or a failure after <see cref="TestTimeout"/>.</summary>
    public async Task<MqttReceived> ReceiveAsync()
    {
        using var cts = new CancellationTokenSource(TestTimeout);
        return await _received.Reader.ReadAsync(cts.Token);
    }

    /// <summary>What arrives within <paramref name="wait"/> (to show that something did not).</summary>
    public async Task<List<MqttReceived>> DrainAsync(TimeSpan wait)
    {
        await Task.Delay(wait);
        var list = new List<MqttReceived>();
        while (_received.Reader.TryRead(out var message))
        {
            list.Add(message);
        }

        return list;
    }

    public async ValueTask DisposeAsync()
    {
        if (Client.IsConnected)
        {
            try
            {
                await Client.DisconnectAsync();
            }
            catch (Exception e) when (e is MQTTnet.Exceptions.MqttCommunicationException or OperationCanceledException)
            {
            }
        }

        Client.Dispose();
    }
}

/// <summary>A raw TCP connection to an MQTT port: bytes in, bytes out, to test what a client library would never send.</summary>
public sealed class MqttRawClient : IAsyncDisposable
{
    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;

    private MqttRawClient(TcpClient tcp)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
    }

    public static async Task<MqttRawClient> ConnectAsync(int port)
    {
        var tcp = new TcpClient();
        await tcp.ConnectAsync(IPAddress.Loopback, port);
        return new MqttRawClient(tcp);
    }

    /// <summary>CONNECT for MQTT 3.1.1 (or another <paramref name="level"/>) with a client id.</summary>
    public static byte[] Connect(string clientId, bool clean = true, ushort keepAlive = 60, byte level = 4)
    {
        var id = Encoding.UTF8.GetBytes(clientId);
        byte[] body = [0, 4, (byte)'M', (byte)'Q', (byte)'T', (byte)'T', level, (byte)(clean ? 0x02 : 0x00), (byte)(keepAlive >> 8), (byte)keepAlive, (byte)(id.Length >> 8), (byte)id.Length, .. id];
        return [0x10, (byte)body.Length, .. body];
    }

    public async Task SendAsync(byte[] bytes) => await _stream.WriteAsync(bytes);

    /// <summary>Ends the sending side (the server reads end of stream).</summary>
    public void ShutdownWrite() => _tcp.Client.Shutdown(SocketShutdown.Send);

    /// <summary>PUBLISH of <paramref name="payload"/> on <paramref name="topic"/> (packet id for QoS 1/2; remaining length under 128).</summary>
    public static byte[] Publish(string topic, string payload, byte qos = 0, ushort packetId = 0, bool dup = false, bool retain = false)
    {
        var t = Encoding.UTF8.GetBytes(topic);
        byte[] id = qos > 0 ? [(byte)(packetId >> 8), (byte)packetId] : [];
        byte[] body = [(byte)(t.Length >> 8), (byte)t.Length, .. t, .. id, .. Encoding.UTF8.GetBytes(payload)];
        return [(byte)(0x30 | (dup ? 0x08 : 0) | (qos << 1) | (retain ? 1 : 0)), (byte)body.Length, .. body];
    }

    /// <summary>Reads exactly <paramref name="count"/> bytes, or returns what came before the server closed.</summary>
    public async Task<byte[]> ReadAsync(int count)
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var buffer = new byte[count];
        var read = 0;
        while (read < count)
        {
            var n = await _stream.ReadAsync(buffer.AsMemory(read), cts.Token);
            if (n == 0)
            {
                break;
            }

            read += n;
        }

        return buffer[..read];
    }

    /// <summary>Reads one packet: its first byte and its body (remaining length under 16 KB).</summary>
    public async Task<(byte First, byte[] Body)> ReadPacketAsync()
    {
        var first = await ReadAsync(1);
        Assert.True(first.Length == 1, "the server closed the connection instead of sending a packet");
        var length = 0;
        for (var shift = 0; ; shift += 7)
        {
            var b = (await ReadAsync(1))[0];
            length |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                break;
            }
        }

        return (first[0], await ReadAsync(length));
    }

    /// <summary>SUBSCRIBE one filter at <paramref name="qos"/> with packet id 1, and checks the SUBACK granted it.</summary>
    public async Task SubscribeAsync(string filter, byte qos)
    {
        var bytes = Encoding.UTF8.GetBytes(filter);
        byte[] body = [0, 1, (byte)(bytes.Length >> 8), (byte)bytes.Length, .. bytes, qos];
        await SendAsync([0x82, (byte)body.Length, .. body]);
        Assert.Equal(new byte[] { 0x90, 3, 0, 1, qos }, await ReadAsync(5));
    }

    /// <summary>Waits until the server closes the connection, returning whatever it sent before; fails after the timeout.</summary>
    public async Task<byte[]> ReadUntilClosedAsync()
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        var all = new List<byte>();
        var buffer = new byte[256];
        try
        {
            while (true)
            {
                var n = await _stream.ReadAsync(buffer, cts.Token);
                if (n == 0)
                {
                    return [.. all];
                }

                all.AddRange(buffer[..n]);
            }
        }
        catch (IOException)
        {
            return [.. all]; // reset by the server: closed as well
        }
    }

    public ValueTask DisposeAsync()
    {
        _tcp.Dispose();
        return ValueTask.CompletedTask;
    }
}

/// <summary>Debian's mosquitto_pub and mosquitto_sub, run as processes (killed by id when done).</summary>
public static class MosquittoClients
{
    /// <summary>Runs mosquitto_pub and returns its exit code; <paramref name="extraArgs"/> go last (e.g. TLS options).</summary>
    public static async Task<int> PublishAsync(int port, string topic, string message, int qos = 0, bool retain = false, IEnumerable<string>? extraArgs = null)
    {
        List<string> args = ["-h", "127.0.0.1", "-p", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-t", topic, "-m", message, "-q", qos.ToString(System.Globalization.CultureInfo.InvariantCulture)];
        if (retain)
        {
            args.Add("-r");
        }

        args.AddRange(extraArgs ?? []);

        var (code, _) = await RunAsync("/usr/bin/mosquitto_pub", args);
        return code;
    }

    /// <summary>
    /// Starts mosquitto_sub (-v -d) on <paramref name="filter"/>, exiting after <paramref name="count"/>
    /// messages, and returns once its SUBACK has arrived.
    /// </summary>
    public static async Task<MosquittoSubscriber> SubscribeAsync(int port, string filter, int count, int qos = 0, IEnumerable<string>? extraArgs = null)
    {
        // stdbuf: mosquitto_sub's stdout is block-buffered into a pipe; line-buffer it so SUBACK shows at once.
        var process = Process.Start(new ProcessStartInfo("/usr/bin/stdbuf",
            ["-oL", "-eL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-t", filter, "-q", qos.ToString(System.Globalization.CultureInfo.InvariantCulture), "-v", "-d", "-C", count.ToString(System.Globalization.CultureInfo.InvariantCulture), "-W", "15", .. extraArgs ?? []])
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        }) ?? throw new InvalidOperationException("could not start mosquitto_sub (apt-get install mosquitto-clients)");
        var subscriber = new MosquittoSubscriber(process);
        await subscriber.WaitForLineAsync(line => line.Contains("received SUBACK", StringComparison.Ordinal));
        return subscriber;
    }

    private static async Task<(int Code, string Output)> RunAsync(string file, IEnumerable<string> args)
    {
        using var process = Process.Start(new ProcessStartInfo(file, args)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        }) ?? throw new InvalidOperationException($"could not start {file}");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var output = await process.StandardOutput.ReadToEndAsync(cts.Token);
        await process.WaitForExitAsync(cts.Token);
        return (process.ExitCode, output);
    }
}

/// <summary>A running mosquitto_sub; its "topic payload" lines, without the -d debug lines ("Client ...", "Subscribed (...").</summary>
public sealed class MosquittoSubscriber
{
    private readonly Process _process;
    private readonly Channel<string> _lines = Channel.CreateUnbounded<string>();

    internal MosquittoSubscriber(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                _lines.Writer.TryComplete();
            }
            else
            {
                _lines.Writer.TryWrite(e.Data);
            }
        };
        process.BeginOutputReadLine();
    }

    internal async Task WaitForLineAsync(Func<string, bool> predicate)
    {
        using var cts = new CancellationTokenSource(MqttTestClient.TestTimeout);
        while (!predicate(await _lines.Reader.ReadAsync(cts.Token)))
        {
        }
    }

    /// <summary>Waits for mosquitto_sub to exit and returns its message lines.</summary>
    public async Task<List<string>> MessagesAsync()
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var messages = new List<string>();
        await foreach (var line in _lines.Reader.ReadAllAsync(cts.Token))
        {
            if (!line.StartsWith("Client ", StringComparison.Ordinal) && !line.StartsWith("Subscribed (", StringComparison.Ordinal))
            {
                messages.Add(line);
            }
        }

        await _process.WaitForExitAsync(cts.Token);
        _process.Dispose();
        return messages;
    }
}
