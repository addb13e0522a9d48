using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// The leaf node port as a raw socket sees it, Courier and nats-server 2.9.10 alike: the hub's INFO
/// (a client id and leafnode_urls, which a nats-server leaf requires), a client's CONNECT refused with
/// nats-server's error, a wrong password refused, and a link that sends garbage closed alone.
/// </summary>
public sealed class LeafWireTests
{
    private static readonly TimeSpan ReadTimeout = TimeSpan.FromSeconds(10);

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task The_hubs_info_names_the_link_and_its_leafnode_urls_and_a_client_is_refused(ServerKind hubKind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, $"leafnodes {{ listen: \"127.0.0.1:{leafPort}\" }}");
        using var socket = await ConnectAsync(leafPort);
        var info = await ReadLineAsync(socket);
        Assert.StartsWith("INFO ", info, StringComparison.Ordinal);
        using (var json = JsonDocument.Parse(info[5..]))
        {
            Assert.True(json.RootElement.GetProperty("client_id").GetUInt64() > 0);
            Assert.Contains($"127.0.0.1:{leafPort}", json.RootElement.GetProperty("leafnode_urls").EnumerateArray().Select(u => u.GetString()));
            Assert.True(json.RootElement.GetProperty("headers").GetBoolean());
        }

        await SendAsync(socket, "CONNECT {\"lang\":\"go\",\"verbose\":false,\"pedantic\":false}\r\n");
        Assert.Equal("-ERR 'attempted to connect to leaf node port'", await ReadLineAsync(socket));
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_leaf_with_a_wrong_password_is_refused(ServerKind hubKind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, LeafTopology.HubConfig(leafPort));
        using var socket = await ConnectAsync(leafPort);
        await ReadLineAsync(socket); // INFO
        await SendAsync(socket, "CONNECT {\"user\":\"leaf\",\"pass\":\"wrong\",\"tls_required\":false,\"name\":\"x\",\"headers\":true}\r\n");
        Assert.Equal("-ERR 'Authorization Violation'", await ReadLineAsync(socket));
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_link_that_sends_garbage_is_closed_and_the_other_links_keep_working(ServerKind hubKind)
    {
        var p = $"leafwire{Guid.NewGuid():N}";
        await using var topology = await LeafTopology.StartAsync(hubKind, ServerKind.Courier);
        using var socket = await ConnectAsync(topology.LeafPort);
        await ReadLineAsync(socket); // INFO
        await SendAsync(socket, "CONNECT {\"user\":\"leaf\",\"pass\":\"leaf\",\"tls_required\":false,\"name\":\"raw\",\"headers\":true}\r\nPING\r\n");
        var line = await ReadLineAsync(socket);
        while (line != "PONG")
        {
            line = await ReadLineAsync(socket); // the connect INFO, LS+ of the account's interest
        }

        await SendAsync(socket, "BOGUS op\r\n");
        Assert.True(await ClosedAsync(socket), "the hub kept a link that sent an unknown operation");

        await using var hub = await topology.ConnectHubAsync();
        await using var leaf = await topology.ConnectLeafAsync();
        await using var inbox = await Collect.SubscribeAsync(leaf, $"{p}.x");
        await topology.CrossedAsync(leaf, hub, $"{p}.ready");
        await hub.PublishAsync($"{p}.x", "still linked");
        Assert.True(await Poll.UntilAsync(() => !inbox.Messages.IsEmpty, LeafTopology.ConvergeTimeout), topology.Diagnostics());
    }

    private static async Task<Socket> ConnectAsync(int port)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { ReceiveTimeout = (int)ReadTimeout.TotalMilliseconds };
        await socket.ConnectAsync("127.0.0.1", port);
        return socket;
    }

    private static Task SendAsync(Socket socket, string text) => socket.SendAsync(Encoding.ASCII.GetBytes(text), SocketFlags.None);

    // One line without its CRLF; bounded by the read timeout.
    private static async Task<string> ReadLineAsync(Socket socket)
    {
        using var cts = new CancellationTokenSource(ReadTimeout);
        var line = new StringBuilder();
        var one = new byte[1];
        while (true)
        {
            var n = await socket.ReceiveAsync(one, SocketFlags.None, cts.Token);
            if (n == 0)
            {
                throw new IOException($"closed after \"{line}\"");
            }

            if (one[0] == (byte)'\n')
            {
                return line.ToString().TrimEnd('\r');
            }

            line.Append((char)one[0]);
        }
    }

    // Whether the peer closes the socket (reading and dropping what comes before), within the read timeout.
    private static async Task<bool> ClosedAsync(Socket socket)
    {
        using var cts = new CancellationTokenSource(ReadTimeout);
        var buffer = new byte[4096];
        try
        {
            while (await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token) > 0)
            {
            }

            return true;
        }
        catch (SocketException)
        {
            return true; // reset by the peer
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
