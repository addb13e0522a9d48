using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Operations;

/// <summary>
/// Courier's <c>idle_poll</c> (no nats-server counterpart): request/reply through NATS.Net starts the
/// server's poll thread at SCHED_IDLE by default, <c>idle_poll: 0</c> keeps it from ever starting, and a
/// reload that sets it starts it.
/// Observed in the server process's /proc, as an operator would.
/// </summary>
[Trait("server", "courier")]
public sealed class IdlePollTests
{
    private const int SchedIdle = 5;

    [Fact]
    public async Task Request_reply_starts_the_poll_thread_at_sched_idle_by_default()
    {
        await using var server = await ServerProcess.StartAsync(ServerKind.Courier);
        await RequestReplyAsync(server.Url);

        var policy = PollThreadPolicy(server.Pid);
        Assert.True(policy is not null, "no courier.idle-poll thread in the server after request/reply");
        Assert.Equal(SchedIdle, policy);
    }

    [Fact]
    public async Task With_idle_poll_0_the_poll_thread_never_starts()
    {
        await using var server = await ServerProcess.StartAsync(ServerKind.Courier, "idle_poll: \"0s\"\n");
        await RequestReplyAsync(server.Url);

        Assert.Null(PollThreadPolicy(server.Pid));
    }

    [Fact]
    public async Task A_reload_turns_the_idle_poll_on()
    {
        await using var server = await ServerProcess.StartAsync(ServerKind.Courier, "idle_poll: \"0s\"\n");
        await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), "idle_poll: \"250us\"\n");

        await server.SignalAsync("HUP");

        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        while (!server.Log.All().Contains("Reloaded: idle_poll = 250\u00b5s", StringComparison.Ordinal))
        {
            await Task.Delay(50, cts.Token);
        }

        await RequestReplyAsync(server.Url);
        Assert.Equal(SchedIdle, PollThreadPolicy(server.Pid));
    }

    private static async Task RequestReplyAsync(string url)
    {
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
        await using var service = await NatsNetClient.ConnectAsync(url);
        await using var client = await NatsNetClient.ConnectAsync(url);
        var subject = $"{Subjects.NewPrefix()}.echo";
        await using var sub = await service.SubscribeCoreAsync<string>(subject, cancellationToken: cts.Token);
        await service.PingAsync(cts.Token);
        var responder = Task.Run(
            async () =>
            {
                for (var i = 0; i < 20; i++)
                {
                    var request = await sub.Msgs.ReadAsync(cts.Token);
                    await request.ReplyAsync(request.Data, cancellationToken: cts.Token);
                }
            },
            cts.Token);

        for (var i = 0; i < 20; i++)
        {
            var reply = await client.RequestAsync<string, string>(subject, $"ping {i}", cancellationToken: cts.Token);
            Assert.Equal($"ping {i}", reply.Data);
        }

        await responder;
    }

    // The scheduling policy (proc(5) stat field 41) of the server's idle poll thread, null when it has none.
    private static int? PollThreadPolicy(int pid)
    {
        foreach (var task in Directory.GetDirectories($"/proc/{pid}/task"))
        {
            try
            {
                if (File.ReadAllText(Path.Combine(task, "comm")).Trim() != "courier.idle-po") // comm keeps 15 characters
                {
                    continue;
                }

                var stat = File.ReadAllText(Path.Combine(task, "stat"));
                return int.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[38]);
            }
            catch (IOException)
            {
                // A thread that ended meanwhile.
            }
        }

        return null;
    }
}
