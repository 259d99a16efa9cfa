package flowspec.agent;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.concurrent.ThreadLocalRandom;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

/**
 * {@code -javaagent:flowspec-agent.jar=out=DIR[,level=queues,...]}: records the broker's flow
 * control as a trace of docs/trace-format.md. It instruments, by class and method name, the code
 * points docs/instrumenting.md lists for the {@code queues} and {@code full} levels, alike in 4.9.x and 5.x (the
 * advice below), and calls {@link Hooks}.
 */
public final class Agent {
    private Agent() {
    }

    public static void premain(String args, Instrumentation inst) throws Exception {
        Options options = Options.parse(args);
        Recorder recorder = new Recorder(options);
        Hooks.install(recorder, options);
        Runtime.getRuntime().addShutdownHook(new Thread(recorder::close, "flowspec-trace-close"));
        // ConcurrentHashMap loads ThreadLocalRandom the first time two threads contend on its size
        // counter. The JVM then runs every installed transformer on that class, and a contended
        // map inside this agent's transformer asks for ThreadLocalRandom again: the load fails
        // with a ClassCircularityError, thrown into the thread that started it (JDK-8164165; CI
        // saw it once, in a scenario's FutureTask.get). Loaded here, before the transformer is
        // installed, ThreadLocalRandom is never loaded while it runs.
        ThreadLocalRandom.current();
        new AgentBuilder.Default()
            .disableClassFormatChanges()
            .with(new AgentBuilder.Listener.Adapter() {
                @Override
                public void onError(String type, ClassLoader loader, JavaModule module, boolean loaded, Throwable t) {
                    recorder.agentError(new IllegalStateException("cannot instrument " + type + ": " + t, t));
                }
            })
            .type(named("org.apache.rocketmq.broker.BrokerController"))
            .transform(advice(ControllerConstructed.class, isConstructor()))
            .transform(advice(ControllerStarting.class, named("start").and(takesArguments(0))))
            .type(named("org.apache.rocketmq.remoting.netty.NettyRemotingAbstract"))
            .transform(advice(Dispatch.class, named("processRequestCommand").and(takesArguments(2))))
            .type(named("org.apache.rocketmq.remoting.netty.RequestTask"))
            .transform(advice(TaskCreated.class, isConstructor()))
            .transform(advice(TaskRun.class, named("run").and(takesArguments(0))))
            .transform(advice(ReturnResponse.class, named("returnResponse").and(takesArguments(int.class, String.class))))
            .type(nameStartsWith("org.apache.rocketmq.broker.processor."))
            .transform(advice(RejectRequest.class, named("rejectRequest").and(takesArguments(0)).and(returns(boolean.class))))
            .type(named("io.netty.channel.AbstractChannelHandlerContext"))
            .transform(advice(Written.class, named("writeAndFlush").and(takesArguments(2))))
            .type(named("org.apache.rocketmq.store.DefaultMessageStore"))
            .transform(advice(PutScope.class, namedOneOf("putMessage", "asyncPutMessage", "putMessages", "asyncPutMessages")))
            .transform(advice(PageCacheBusy.class, named("isOSPageCacheBusy").and(takesArguments(0))))
            .type(hasSuperType(named("org.apache.rocketmq.store.PutMessageLock")).and(not(isInterface())))
            .transform(advice(PutLockRelease.class, named("unlock").and(takesArguments(0))))
            .transform(advice(PutLockAcquire.class, named("lock").and(takesArguments(0))))
            .type(namedOneOf("org.apache.rocketmq.store.MappedFile", "org.apache.rocketmq.store.logfile.DefaultMappedFile"))
            .transform(advice(Commit.class, named("commit0").and(takesArguments(0))))
            .type(named("org.apache.rocketmq.store.TransientStorePool"))
            .transform(advice(BufferReturn.class, named("returnBuffer").and(takesArguments(1))))
            .type(named("org.apache.rocketmq.store.MappedFileQueue"))
            .transform(advice(MappedFileReturned.class, named("getLastMappedFile")))
            .type(named("org.apache.rocketmq.common.BrokerConfig"))
            .transform(advice(FastFailureSwitch.class, named("isBrokerFastFailureEnable").and(takesArguments(0))))
            .type(named("org.apache.rocketmq.broker.latency.BrokerFastFailure"))
            .transform(advice(FastFailureConstructed.class, isConstructor()))
            .transform(advice(FastFailureRun.class, named("cleanExpiredRequest").and(takesArguments(0))))
            .transform(advice(FastFailureQueue.class, named("cleanExpiredRequestInQueue").and(takesArguments(2))))
            .transform(advice(CastRunnable.class, named("castRunnable").and(takesArguments(1))))
            .installOn(inst);
    }

    private static AgentBuilder.Transformer advice(Class<?> advice, ElementMatcher<? super MethodDescription> on) {
        return (DynamicType.Builder<?> builder, TypeDescription type, ClassLoader loader, JavaModule module,
            java.security.ProtectionDomain domain) -> builder.visit(Advice.to(advice).on(on));
    }

    // Each advice only calls a Hooks method, which catches everything; suppress = Throwable is a
    // second guard so that nothing thrown in the agent can reach broker code.

    public static final class ControllerConstructed {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object controller) {
            Hooks.controllerConstructed(controller);
        }
    }

    /**
     * 5.3.0+ BrokerFastFailure keeps the controller's queues from its constructor, which the
     * controller's constructor calls: the queues are replaced before it reads them.
     */
    public static final class FastFailureConstructed {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object controller) {
            Hooks.controllerConstructed(controller);
        }
    }

    public static final class ControllerStarting {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object controller) {
            Hooks.controllerStarting(controller);
        }
    }

    public static final class Dispatch {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object handler, @Advice.Argument(0) Object ctx, @Advice.Argument(1) Object cmd) {
            Hooks.dispatchEnter(handler, ctx, cmd);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit() {
            Hooks.dispatchExit();
        }
    }

    public static final class TaskCreated {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object task) {
            Hooks.taskCreated(task);
        }
    }

    public static final class TaskRun {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object task) {
            Hooks.runEnter(task);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit() {
            Hooks.runExit();
        }
    }

    public static final class ReturnResponse {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object task, @Advice.Argument(0) int code, @Advice.Argument(1) String remark) {
            Hooks.fastFailureAnswers(task, code, remark);
        }
    }

    public static final class RejectRequest {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return boolean rejected) {
            Hooks.rejectRequestReturned(rejected);
        }
    }

    public static final class Written {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object ctx, @Advice.Argument(0) Object msg) {
            Hooks.written(ctx, msg);
        }
    }

    public static final class PutScope {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            Hooks.putScope(1, false);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Thrown Throwable thrown) {
            Hooks.putScope(-1, thrown != null);
        }
    }

    public static final class PutLockAcquire {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit() {
            Hooks.putLockAcquired();
        }
    }

    public static final class Commit {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static boolean enter() {
            return Hooks.commitEntering();
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Enter boolean locked) {
            Hooks.commitReturned(locked);
        }
    }

    public static final class BufferReturn {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            Hooks.bufferReturning();
        }
    }

    public static final class MappedFileReturned {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object fileQueue, @Advice.Return Object file) {
            Hooks.mappedFileReturned(fileQueue, file);
        }
    }

    public static final class PutLockRelease {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            Hooks.putLockReleasing();
        }
    }

    public static final class PageCacheBusy {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static boolean enter() {
            return Hooks.pageCacheCheckEntering();
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Return boolean busy, @Advice.Enter boolean locked) {
            Hooks.pageCacheBusyReturned(busy, locked);
        }
    }

    public static final class FastFailureSwitch {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return boolean enabled) {
            Hooks.fastFailureSwitchRead(enabled);
        }
    }

    public static final class FastFailureRun {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            Hooks.cleanEnter();
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit() {
            Hooks.cleanExit();
        }
    }

    public static final class FastFailureQueue {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) Object queue) {
            Hooks.cleanQueueEnter(queue);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit() {
            Hooks.cleanQueueExit();
        }
    }

    public static final class CastRunnable {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return Object task) {
            Hooks.castReturned(task);
        }
    }
}
