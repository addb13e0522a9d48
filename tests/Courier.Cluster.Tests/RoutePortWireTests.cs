using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>
/// The route port on the wire, the same against courier and nats-server 2.9.10: the route INFO's
/// fields, and the errors for a client on the route port and for a peer of another cluster.
/// </summary>
public sealed class RoutePortWireTests
{
    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task The_route_info_names_the_server_its_route_port_and_cluster(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync(kind);
        using var route = await RouteWire.ConnectAsync(mesh.RoutePorts[0]);
        using var info = JsonDocument.Parse(route.Info["INFO ".Length..]);
        var root = info.RootElement;
        Assert.StartsWith("N", root.GetProperty("server_id").GetString(), StringComparison.Ordinal);
        Assert.Equal("node-0", root.GetProperty("server_name").GetString());
        Assert.Equal(mesh.RoutePorts[0], root.GetProperty("port").GetInt32());
        Assert.Equal(Mesh.ClusterName, root.GetProperty("cluster").GetString());
        Assert.True(root.GetProperty("headers").GetBoolean());
        Assert.Equal(2, root.GetProperty("proto").GetInt32());
        Assert.Equal([$"127.0.0.1:{mesh.Nodes[0].Port}"], root.GetProperty("connect_urls").EnumerateArray().Select(u => u.GetString()));
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_client_on_the_route_port_is_refused_with_nats_servers_error(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync(kind);
        using var route = await RouteWire.ConnectAsync(mesh.RoutePorts[0]);
        await route.SendAsync("CONNECT {\"verbose\":false,\"lang\":\"go\",\"version\":\"1.0\"}\r\n");
        Assert.Equal("-ERR 'attempted to connect to route port'", await route.ReadLineAsync());
        Assert.True(await route.ClosedAsync(), "the route port kept the client's connection open");
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_peer_of_another_cluster_is_refused_with_nats_servers_error(ServerKind kind)
    {
        await using var mesh = await Mesh.StartAsync(kind);
        using var route = await RouteWire.ConnectAsync(mesh.RoutePorts[0]);
        await route.SendAsync("CONNECT {\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"name\":\"NTESTPEER\",\"headers\":true,\"cluster\":\"other\",\"lnoc\":true}\r\n");
        Assert.Equal($"-ERR 'Rejecting connection, cluster name \"other\" does not match \"{Mesh.ClusterName}\"'", await route.ReadLineAsync());
        Assert.True(await route.ClosedAsync(), "the peer of another cluster was kept");
    }

    /// <summary>A raw TCP connection to a route port; the first line (INFO) is read on connect.</summary>
    private sealed class RouteWire : IDisposable
    {
        private static readonly TimeSpan ReadTimeout = TimeSpan.FromSeconds(10);

        private readonly TcpClient _tcp;
        private readonly StreamReader _reader;

        private RouteWire(TcpClient tcp)
        {
            _tcp = tcp;
            _reader = new StreamReader(tcp.GetStream(), Encoding.UTF8);
        }

        public string Info { get; private set; } = "";

        public static async Task<RouteWire> ConnectAsync(int port)
        {
            var tcp = new TcpClient();
            await tcp.ConnectAsync("127.0.0.1", port);
            var wire = new RouteWire(tcp);
            wire.Info = await wire.ReadLineAsync() ?? "";
            Assert.StartsWith("INFO ", wire.Info, StringComparison.Ordinal);
            return wire;
        }

        public async Task SendAsync(string text) => await _tcp.GetStream().WriteAsync(Encoding.UTF8.GetBytes(text));

        /// <summary>The next line that is not a PING (nats-server pings a new route early).</summary>
        public async Task<string?> ReadLineAsync()
        {
            using var timeout = new CancellationTokenSource(ReadTimeout);
            while (true)
            {
                var line = await _reader.ReadLineAsync(timeout.Token);
                if (line != "PING")
                {
                    return line?.TrimEnd();
                }
            }
        }

        /// <summary>Whether the server closes the connection (end of stream or reset) within the read timeout.</summary>
        public async Task<bool> ClosedAsync()
        {
            using var timeout = new CancellationTokenSource(ReadTimeout);
            try
            {
                while (await _reader.ReadLineAsync(timeout.Token) is not null)
                {
                }

                return true;
            }
            catch (IOException)
            {
                return true;
            }
            catch (OperationCanceledException)
            {
                return false;
            }
        }

        public void Dispose()
        {
            _reader.Dispose();
            _tcp.Dispose();
        }
    }
}
