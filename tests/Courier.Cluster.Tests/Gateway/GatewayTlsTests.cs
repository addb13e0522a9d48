using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using System.Text.RegularExpressions;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Cluster.Tests.Gateway;

/// <summary>
/// <c>gateway { tls { cert_file, key_file, ca_file } }</c>, as nats-server 2.9.10: the handshake comes
/// first on every gateway link, both ways (one block: this node's certificate as server and as client),
/// the peer's certificate always verified; a Go nats-server 2.9.10 and Courier form a TLS super-cluster
/// whichever is east or west. Certificates come from the test's own CA.
/// </summary>
public sealed class GatewayTlsTests : IDisposable
{
    private readonly TestCertificates _certificates = TestCertificates.Create();

    public void Dispose() => _certificates.Dispose();

    // No "verify: true": nats-server's gateways verify the peer whatever the block says.
    private string TlsBlock() => $$"""
        tls {
          cert_file: "{{_certificates.RouteCert}}"
          key_file: "{{_certificates.RouteKey}}"
          ca_file: "{{_certificates.CaFile}}"
          timeout: 5
        }
        """;

    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    public async Task Tls_gateways_link_and_messages_cross_both_ways(ServerKind eastKind, ServerKind westKind)
    {
        // StartAsync waits until an east client and a west client reach each other both ways.
        await using var topology = await GatewayTopology.StartAsync(eastKind, westKind, TlsBlock());
        await using var east = await topology.ConnectEastAsync();
        await using var west = await topology.ConnectWestAsync();

        var p = $"gwtls{Guid.NewGuid():N}";
        await using var onWest = await Collect.SubscribeAsync(west, $"{p}.west");
        await using var onEast = await Collect.SubscribeAsync(east, $"{p}.east");
        await topology.CrossedAsync(west, east, $"{p}.ready.west");
        await topology.CrossedAsync(east, west, $"{p}.ready.east");
        await east.PublishAsync($"{p}.west", "east to west over tls");
        await west.PublishAsync($"{p}.east", "west to east over tls");
        await east.PingAsync();
        await west.PingAsync();

        Assert.True(await Poll.UntilAsync(() => !onWest.Messages.IsEmpty && !onEast.Messages.IsEmpty, GatewayTopology.ConvergeTimeout), topology.Diagnostics());
        Assert.Equal("east to west over tls", onWest.Messages.First().Data);
        Assert.Equal("west to east over tls", onEast.Messages.First().Data);
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Varz_shows_the_gateways_tls_and_the_auth_timeout_it_implies(ServerKind kind)
    {
        var port = LoopbackPorts.Next();
        await using var node = await ServerProcess.StartAsync(kind, GatewayTopology.Config("east", port, "west", LoopbackPorts.Next(), TlsBlock()), "-n", "east1");

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        using var varz = System.Text.Json.JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "varz")));
        var gateway = varz.RootElement.GetProperty("gateway");
        Assert.Equal(5, gateway.GetProperty("tls_timeout").GetDouble());
        Assert.True(gateway.GetProperty("tls_required").GetBoolean());
        Assert.True(gateway.GetProperty("tls_verify").GetBoolean());
        Assert.Equal(6, gateway.GetProperty("auth_timeout").GetDouble()); // nats-server: the TLS timeout + 1 s unless set
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Plain_text_on_a_tls_gateway_port_is_refused_with_nats_servers_log_line(ServerKind kind)
    {
        var port = LoopbackPorts.Next();
        await using var node = await ServerProcess.StartAsync(kind, GatewayTopology.Config("east", port, "west", LoopbackPorts.Next(), TlsBlock()), "-n", "east1");

        using var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", port);
        var stream = tcp.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes("CONNECT {\"echo\":false,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"name\":\"NPLAIN\",\"gateway\":\"west\"}\r\n"));

        // No INFO in the clear: the port waits for a ClientHello, and closes on anything else.
        Assert.DoesNotContain("INFO", await ReadUntilClosedAsync(stream), StringComparison.Ordinal);
        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(node), GatewayTopology.ConvergeTimeout),
            $"no 'gid:N - TLS gateway handshake error' line\n{node.Diagnostics()}");
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_gateway_peer_without_a_certificate_is_refused_even_without_verify_in_the_block(ServerKind kind)
    {
        var port = LoopbackPorts.Next();
        await using var node = await ServerProcess.StartAsync(kind, GatewayTopology.Config("east", port, "west", LoopbackPorts.Next(), TlsBlock()), "-n", "east1");

        using var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", port);
        await using var ssl = new SslStream(tcp.GetStream(), leaveInnerStreamOpen: false, (_, _, _, _) => true);
        string received;
        try
        {
            await ssl.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "127.0.0.1" });
            received = await ReadUntilClosedAsync(ssl); // TLS 1.3: the refusal comes after the client's side completed
        }
        catch (Exception e) when (e is AuthenticationException or IOException)
        {
            received = "";
        }

        Assert.DoesNotContain("INFO", received, StringComparison.Ordinal);
        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(node), GatewayTopology.ConvergeTimeout),
            $"no 'gid:N - TLS gateway handshake error' line\n{node.Diagnostics()}");
    }

    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    public async Task A_gateways_entry_with_its_own_tls_block_dials_with_it(ServerKind eastKind, ServerKind westKind)
    {
        // East's entry for west trusts another CA: east's dials to west fail their handshake, though the
        // gateway block (which west's dials to east meet) would have trusted west.
        var (eastPort, westPort) = (LoopbackPorts.Next(), LoopbackPorts.Next());
        var entryTls = $$"""tls { cert_file: "{{_certificates.RouteCert}}", key_file: "{{_certificates.RouteKey}}", ca_file: "{{_certificates.OtherCaFile}}", timeout: 5 }""";
        var eastConfig = $$"""
            gateway {
              name: "east"
              listen: "127.0.0.1:{{eastPort}}"
              gateways [ { name: "west", url: "nats://127.0.0.1:{{westPort}}", {{entryTls}} } ]
              {{TlsBlock()}}
            }
            """;
        await using var east = await ServerProcess.StartAsync(eastKind, eastConfig, "-n", "east1");
        await using var west = await ServerProcess.StartAsync(westKind, GatewayTopology.Config("west", westPort, "east", eastPort, TlsBlock()), "-n", "west1");

        Assert.True(
            await Poll.UntilAsync(() => Regex.IsMatch(east.Log.All(), @"gid:\d+ - TLS gateway handshake error: .*(unknown authority|failed to verify)"), GatewayTopology.ConvergeTimeout),
            $"east's dial to west did not fail on west's certificate\n{east.Diagnostics()}\n\n{west.Diagnostics()}");
    }

    private static bool HandshakeErrorLogged(ServerProcess node) =>
        Regex.IsMatch(node.Log.All(), @"127\.0\.0\.1:\d+ - gid:\d+ - TLS gateway handshake error");

    private static async Task<string> ReadUntilClosedAsync(Stream stream)
    {
        using var cts = new CancellationTokenSource(GatewayTopology.ConvergeTimeout);
        var all = new StringBuilder();
        var buffer = new byte[1024];
        try
        {
            while (true)
            {
                var n = await stream.ReadAsync(buffer, cts.Token);
                if (n == 0)
                {
                    return all.ToString();
                }

                all.Append(Encoding.Latin1.GetString(buffer, 0, n));
            }
        }
        catch (Exception e) when (e is IOException or AuthenticationException)
        {
            return all.ToString(); // reset or alerted by the server: closed as well
        }
    }
}
