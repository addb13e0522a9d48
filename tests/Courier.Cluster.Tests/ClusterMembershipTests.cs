using System.Net;
using System.Text.Json;
using Courier.Cluster.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>
/// The three courier nodes form one Akka.Cluster (seeds from their routes), log membership as
/// nats-server logs route changes, show their routes on /routez and /varz, and tell clients about
/// each other in INFO connect_urls.
/// </summary>
[Collection("courier mesh")]
public sealed class ClusterMembershipTests(CourierMeshFixture fixture)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45); // seeds settle, first seed waits for the others, gossip

    private readonly Mesh _mesh = fixture.Mesh;

    [Fact]
    public async Task Every_node_sees_every_node_up_in_one_akka_cluster_and_reports_healthy()
    {
        for (var i = 0; i < _mesh.Nodes.Count; i++)
        {
            var node = _mesh.Nodes[i];
            var up = await Poll.UntilAsync(
                () =>
                {
                    var lines = node.Log.All().Split('\n');
                    return Enumerable.Range(0, _mesh.Nodes.Count).All(j => lines.Any(line =>
                        line.Contains("Cluster member up: akka.tcp://courier@", StringComparison.Ordinal) && line.Contains($"(node-{j})", StringComparison.Ordinal)));
                },
                Timeout);
            Assert.True(up, $"node-{i} did not log every member up\n{node.Diagnostics(80)}");
        }

        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        foreach (var node in _mesh.Nodes)
        {
            Assert.True(
                await Poll.UntilAsync(async () => (await http.GetAsync(new Uri(node.MonitorUri, "healthz"))).StatusCode == HttpStatusCode.OK, Timeout),
                $"/healthz of {node.Url} never became ok");
        }
    }

    [Fact]
    public async Task Routez_and_varz_show_the_routes_and_the_cluster_as_nats_server()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var node = _mesh.Nodes[0];
        using var routez = JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "routez")));
        var root = routez.RootElement;
        Assert.Equal(2, root.GetProperty("num_routes").GetInt32());
        var names = root.GetProperty("routes").EnumerateArray().Select(r => r.GetProperty("remote_name").GetString()).Order().ToList();
        Assert.Equal(["node-1", "node-2"], names);
        Assert.All(root.GetProperty("routes").EnumerateArray(), r => Assert.StartsWith("N", r.GetProperty("remote_id").GetString(), StringComparison.Ordinal));

        using var varz = JsonDocument.Parse(await http.GetStringAsync(new Uri(node.MonitorUri, "varz")));
        var cluster = varz.RootElement.GetProperty("cluster");
        Assert.Equal(Mesh.ClusterName, cluster.GetProperty("name").GetString());
        Assert.Equal(_mesh.RoutePorts[0], cluster.GetProperty("cluster_port").GetInt32());
        Assert.Equal(3, cluster.GetProperty("urls").GetArrayLength());
        Assert.Equal(2, varz.RootElement.GetProperty("routes").GetInt32());
    }

    [Fact]
    public async Task A_client_learns_every_node_from_info_connect_urls()
    {
        await using var nats = await _mesh.ConnectAsync(1);
        var expected = _mesh.Nodes.Select(n => $"127.0.0.1:{n.Port}").Order().ToList();
        Assert.True(
            await Poll.UntilAsync(() => nats.ServerInfo?.ClientConnectUrls?.Order().SequenceEqual(expected) == true, Timeout),
            $"connect_urls: {string.Join(", ", nats.ServerInfo?.ClientConnectUrls ?? [])}, expected {string.Join(", ", expected)}");
    }
}
