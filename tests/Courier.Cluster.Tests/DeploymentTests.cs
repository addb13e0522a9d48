using System.Diagnostics;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Cluster.Tests;

/// <summary>The three-node docker-compose.yml and its node configs (there is no Docker engine here: the file is checked, not run).</summary>
public sealed class DeploymentTests
{
    [Fact]
    public async Task Docker_compose_file_is_valid_and_defines_three_nodes()
    {
        var (code, output) = await RunAsync("docker-compose", "-f", Path.Combine(RepositoryLayout.Root, "docker-compose.yml"), "config", "--services");
        Assert.True(code == 0, output);
        Assert.Equal(["courier-1", "courier-2", "courier-3"], output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Order());
    }

    [Theory]
    [InlineData("courier-1")]
    [InlineData("courier-2")]
    [InlineData("courier-3")]
    public async Task Each_node_config_is_accepted_by_nats_server_as_a_cluster_of_three(string node)
    {
        // nats-server's -t flag checks a config file and exits: the files are in its format.
        var file = Path.Combine(RepositoryLayout.Root, "deploy", "cluster", node + ".conf");
        var natsServer = ServerExecutable.For(ServerKind.NatsServer);
        var (code, output) = await RunAsync(natsServer.FileName, "-t", "-c", file);
        Assert.True(code == 0, output);
        var text = await File.ReadAllTextAsync(file);
        Assert.Equal(3, text.Split("nats-route://", StringSplitOptions.None).Length - 1);
        Assert.Contains($"server_name: {node}", text, StringComparison.Ordinal);
    }

    private static async Task<(int Code, string Output)> RunAsync(string program, params string[] args)
    {
        using var process = new Process { StartInfo = new ProcessStartInfo(program, args) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false } };
        process.Start();
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await process.WaitForExitAsync(timeout.Token);
        return (process.ExitCode, await stdout + await stderr);
    }
}
