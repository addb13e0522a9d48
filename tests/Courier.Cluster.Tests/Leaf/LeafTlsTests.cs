using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Courier.Cluster.Tests.Infrastructure;
using Courier.Integration.Tests.Infrastructure;
using Courier.Testing;

namespace Courier.Cluster.Tests.Leaf;

/// <summary>
/// TLS on leaf node links, as nats-server 2.9.10: the hub's <c>leafnodes { tls { } }</c> (its INFO says
/// <c>tls_required</c> in the clear, then the handshake; <c>verify</c> requires the leaf's certificate) and a
/// remote's <c>tls { ca_file, cert_file, key_file }</c> (the leaf checks the hub's certificate). Every
/// pairing has a Go nats-server 2.9.10 on one side where it can; certificates come from the test's own CA.
/// </summary>
public sealed class LeafTlsTests : IDisposable
{
    private static readonly HttpClient Http = new() { Timeout = TimeSpan.FromSeconds(10) };

    private readonly TestCertificates _certificates = TestCertificates.Create();

    public void Dispose() => _certificates.Dispose();

    /// <summary>The hub's leafnodes tls block: its server certificate, and client certificates required (unless not <paramref name="verify"/>).</summary>
    private string HubTls(bool verify = true) => $$"""
        tls {
          cert_file: "{{_certificates.ServerCert}}"
          key_file: "{{_certificates.ServerKey}}"
          ca_file: "{{_certificates.CaFile}}"
          verify: {{(verify ? "true" : "false")}}
          timeout: 5
        }
        """;

    /// <summary>A remote's tls block: trusts <paramref name="caFile"/>, presents alice's certificate unless told not to.</summary>
    private string RemoteTls(string caFile, bool withCertificate = true) => withCertificate
        ? $$"""tls { ca_file: "{{caFile}}", cert_file: "{{_certificates.ClientCert("alice")}}", key_file: "{{_certificates.ClientKey("alice")}}", timeout: 5 }"""
        : $$"""tls { ca_file: "{{caFile}}", timeout: 5 }""";

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_leaf_links_to_a_verifying_tls_hub_and_messages_cross_both_ways(ServerKind hubKind, ServerKind leafKind)
    {
        // StartAsync waits until a hub client and a leaf client reach each other both ways.
        await using var topology = await LeafTopology.StartAsync(hubKind, leafKind, RemoteTls(_certificates.CaFile), HubTls());
        await using var hub = await topology.ConnectHubAsync();
        await using var leaf = await topology.ConnectLeafAsync();

        var p = $"tls{Guid.NewGuid():N}";
        await using var onLeaf = await Collect.SubscribeAsync(leaf, $"{p}.down");
        await using var onHub = await Collect.SubscribeAsync(hub, $"{p}.up");
        await topology.CrossedAsync(leaf, hub, $"{p}.ready.down");
        await topology.CrossedAsync(hub, leaf, $"{p}.ready.up");
        await hub.PublishAsync($"{p}.down", "to the leaf over tls");
        await leaf.PublishAsync($"{p}.up", "to the hub over tls");
        await hub.PingAsync();
        await leaf.PingAsync();

        Assert.True(await Poll.UntilAsync(() => !onLeaf.Messages.IsEmpty && !onHub.Messages.IsEmpty, LeafTopology.ConvergeTimeout), topology.Diagnostics());
        Assert.Equal("to the leaf over tls", onLeaf.Messages.First().Data);
        Assert.Equal("to the hub over tls", onHub.Messages.First().Data);
        Assert.Equal(1, await LeafCountAsync(topology.Hub));
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task A_tls_hubs_first_info_comes_in_the_clear_saying_tls_required_and_tls_verify(ServerKind kind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(kind, LeafTopology.HubConfig(leafPort, HubTls()), "-n", "hub");

        using var tcp = new TcpClient();
        await tcp.ConnectAsync("127.0.0.1", leafPort);
        var line = await ReadLineAsync(tcp.GetStream());

        Assert.StartsWith("INFO {", line, StringComparison.Ordinal);
        using var info = JsonDocument.Parse(line["INFO ".Length..]);
        Assert.True(info.RootElement.GetProperty("tls_required").GetBoolean());
        Assert.True(info.RootElement.GetProperty("tls_verify").GetBoolean());
    }

    [Theory]
    [InlineData(ServerKind.Courier)]
    [InlineData(ServerKind.NatsServer)]
    public async Task Varz_shows_the_leaf_listeners_tls_and_the_auth_timeout_it_implies(ServerKind kind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(kind, LeafTopology.HubConfig(leafPort, HubTls()), "-n", "hub");

        using var varz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "varz")));
        var leaf = varz.RootElement.GetProperty("leaf");
        Assert.Equal(5, leaf.GetProperty("tls_timeout").GetDouble());
        Assert.True(leaf.GetProperty("tls_required").GetBoolean());
        Assert.True(leaf.GetProperty("tls_verify").GetBoolean());
        Assert.Equal(6, leaf.GetProperty("auth_timeout").GetDouble()); // nats-server: the TLS timeout + 1 s unless set
    }

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_leaf_that_does_not_trust_the_hubs_certificate_makes_no_link(ServerKind hubKind, ServerKind leafKind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, LeafTopology.HubConfig(leafPort, HubTls()), "-n", "hub");
        await using var leaf = await ServerProcess.StartAsync(leafKind, LeafTopology.LeafConfig(leafPort, RemoteTls(_certificates.OtherCaFile)), "-n", "leaf");

        // The leaf is the TLS client: it refuses the hub's certificate (x509: unknown authority), as nats-server's line says.
        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(leaf), LeafTopology.ConvergeTimeout),
            $"no 'lid:N - TLS leafnode handshake error' line on the leaf\n{leaf.Diagnostics()}\n\n{hub.Diagnostics()}");
        Assert.Equal(0, await LeafCountAsync(hub));
    }

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_hub_with_verify_refuses_a_leaf_without_a_client_certificate(ServerKind hubKind, ServerKind leafKind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, LeafTopology.HubConfig(leafPort, HubTls()), "-n", "hub");
        await using var leaf = await ServerProcess.StartAsync(leafKind, LeafTopology.LeafConfig(leafPort, RemoteTls(_certificates.CaFile, withCertificate: false)), "-n", "leaf");

        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(hub), LeafTopology.ConvergeTimeout),
            $"no 'lid:N - TLS leafnode handshake error' line on the hub\n{hub.Diagnostics()}\n\n{leaf.Diagnostics()}");
        await Task.Delay(TimeSpan.FromSeconds(2)); // a few more dials (reconnect: 1 s): none gets through
        Assert.Equal(0, await LeafCountAsync(hub));
    }

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_leaf_with_insecure_links_to_a_hub_whose_certificate_it_cannot_check(ServerKind hubKind, ServerKind leafKind)
    {
        // The remote trusts nothing it could check the hub with (no ca_file: the system's roots), but insecure skips the check.
        await using var topology = await LeafTopology.StartAsync(hubKind, leafKind, "tls { insecure: true, timeout: 5 }", HubTls(verify: false));

        Assert.Equal(1, await LeafCountAsync(topology.Hub));
    }

    [Theory]
    [InlineData(ServerKind.NatsServer, ServerKind.Courier)]
    [InlineData(ServerKind.Courier, ServerKind.NatsServer)]
    [InlineData(ServerKind.Courier, ServerKind.Courier)]
    public async Task A_leaf_without_a_tls_block_starts_tls_when_the_hub_requires_it(ServerKind hubKind, ServerKind leafKind)
    {
        var leafPort = LoopbackPorts.Next();
        await using var hub = await ServerProcess.StartAsync(hubKind, LeafTopology.HubConfig(leafPort, HubTls(verify: false)), "-n", "hub");
        await using var leaf = await ServerProcess.StartAsync(leafKind, LeafTopology.LeafConfig(leafPort), "-n", "leaf");

        // The hub's INFO says tls_required: the leaf starts TLS with the system's roots, which do not know the test CA.
        Assert.True(
            await Poll.UntilAsync(() => HandshakeErrorLogged(leaf), LeafTopology.ConvergeTimeout),
            $"no 'lid:N - TLS leafnode handshake error' line on the leaf\n{leaf.Diagnostics()}\n\n{hub.Diagnostics()}");
        Assert.Equal(0, await LeafCountAsync(hub));
    }

    private static bool HandshakeErrorLogged(ServerProcess node) =>
        Regex.IsMatch(node.Log.All(), @"lid:\d+ - TLS leafnode handshake error");

    private static async Task<int> LeafCountAsync(ServerProcess hub)
    {
        using var leafz = JsonDocument.Parse(await Http.GetStringAsync(new Uri(hub.MonitorUri, "leafz")));
        return leafz.RootElement.GetProperty("leafnodes").GetInt32();
    }

    /// <summary>The first line the peer sends (bounded in time and size).</summary>
    private static async Task<string> ReadLineAsync(NetworkStream stream)
    {
        using var cts = new CancellationTokenSource(LeafTopology.ConvergeTimeout);
        var line = new StringBuilder();
        var one = new byte[1];
        while (line.Length < 64 * 1024 && await stream.ReadAsync(one, cts.Token) == 1)
        {
            if (one[0] == (byte)'\n')
            {
                break;
            }

            line.Append((char)one[0]);
        }

        return line.ToString().TrimEnd('\r');
    }
}
