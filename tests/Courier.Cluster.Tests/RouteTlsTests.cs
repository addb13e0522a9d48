using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;
using NATS.Client.Core;

namespace Courier.Cluster.Tests;

/// <summary>
/// <c>cluster { tls { cert_file, key_file, ca_file, timeout } }</c>, as nats-server 2.9: the handshake
/// comes first on every route, the peer's certificate is verified both ways, and a Go nats-server
/// 2.9.10 joins a TLS mesh with Courier whichever side dials. Certificates come from the test's own CA.
/// </summary>
public sealed class RouteTlsTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    private readonly TestCertificates _certificates = TestCertificates.Create();

    public void Dispose() => _certificates.Dispose();

    // No "verify: true": nats-server's routes verify the peer whatever the block says.
    private string TlsBlock() => $$"""
        tls {
          cert_file: "{{_certificates.RouteCert}}"
          key_file: "{{_certificates.RouteKey}}"
          ca_file: "{{_certificates.CaFile}}"
          timeout: 5
        }
        """;

    [Fact]
    public async Task Courier_nodes_form_a_tls_mesh_and_route_messages_both_ways()
    {
        await using var mesh = await Mesh.StartAsync([ServerKind.Courier, ServerKind.Courier], null, [], $"cluster {{\n{TlsBlock()}\n}}\n");

        await AssertRoutedAsync(mesh.Nodes[0], mesh.Nodes[1]);
        await AssertRoutedAsync(mesh.Nodes[1], mesh.Nodes[0]);
    }

    [Theory]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    public async Task A_node_dialling_a_tls_route_to_the_other_kind_joins_it(ServerKind dialler, ServerKind listener)
    {
        // Only the dialler names a route: the dialler is the TLS client, the listener the TLS server.
        var listenerPort = LoopbackPorts.Next();
        await using var accepting = await ServerProcess.StartAsync(listener, ClusterConfig(listenerPort, null));
        await using var dialling = await ServerProcess.StartAsync(dialler, ClusterConfig(LoopbackPorts.Next(), listenerPort));

        await AssertRoutedAsync(dialling, accepting);
        await AssertRoutedAsync(accepting, dialling);
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Plain_text_on_a_tls_route_port_is_refused_with_nats_servers_log_line(ServerKind kind)
    {
        var port = LoopbackPorts.Next();
        await using var node = await ServerProcess.StartAsync(kind, ClusterConfig(port, null));

        using var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", port);
        var stream = tcp.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes("CONNECT {\"echo\":true,\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"name\":\"NPLAIN\",\"headers\":true,\"cluster\":\"courier-it\",\"lnoc\":true}\r\n"));

        // No INFO in the clear: the port waits for a ClientHello, and closes on anything else.
        Assert.DoesNotContain("INFO", await ReadUntilClosedAsync(stream), StringComparison.Ordinal);
        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(node), Timeout),
            $"no 'rid:N - TLS route handshake error' line\n{node.Diagnostics()}");
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_route_peer_without_a_certificate_is_refused_even_without_verify_in_the_block(ServerKind kind)
    {
        var port = LoopbackPorts.Next();
        await using var node = await ServerProcess.StartAsync(kind, ClusterConfig(port, null));

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
            await Poll.UntilAsync(() => HandshakeErrorLogged(node), Timeout),
            $"no 'rid:N - TLS route handshake error' line\n{node.Diagnostics()}");
    }

    private static bool HandshakeErrorLogged(ServerProcess node) =>
        System.Text.RegularExpressions.Regex.IsMatch(node.Log.All(), @"127\.0\.0\.1:\d+ - rid:\d+ - TLS route handshake error");

    private string ClusterConfig(int routePort, int? dial) => $$"""
        cluster {
          name: {{Mesh.ClusterName}}
          listen: "127.0.0.1:{{routePort}}"
          {{(dial is { } peer ? $"routes: [\"nats-route://127.0.0.1:{peer}\"]" : "")}}
          {{TlsBlock()}}
        }
        """;

    /// <summary>
    /// Subscribes on <paramref name="to"/> and publishes on <paramref name="from"/> until a message
    /// crosses the route (interest travels the route too), bounded by <see cref="Timeout"/>.
    /// </summary>
    private static async Task AssertRoutedAsync(ServerProcess from, ServerProcess to)
    {
        await using var publisher = await ConnectAsync(from);
        await using var subscriber = await ConnectAsync(to);
        var subject = $"tls.{Guid.NewGuid():N}";
        await using var collect = await Collect.SubscribeAsync(subscriber, subject);
        var crossed = await Poll.UntilAsync(
            async () =>
            {
                await publisher.PublishAsync(subject, "over tls");
                await publisher.PingAsync();
                return !collect.Messages.IsEmpty;
            },
            Timeout);
        Assert.True(crossed, $"nothing crossed from {from.Kind} to {to.Kind}\n{from.Diagnostics()}\n\n{to.Diagnostics()}");
        Assert.Equal("over tls", collect.Messages.First().Data);
    }

    private static async Task<NatsConnection> ConnectAsync(ServerProcess node)
    {
        var connection = new NatsConnection(new NatsOpts { Url = node.Url, MaxReconnectRetry = 0, CommandTimeout = TimeSpan.FromSeconds(10) });
        await connection.ConnectAsync();
        return connection;
    }

    private static async Task<string> ReadUntilClosedAsync(Stream stream)
    {
        using var cts = new CancellationTokenSource(Timeout);
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
