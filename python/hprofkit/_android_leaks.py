"""Known Android framework and vendor leaks, as data (hprofkit.match builds
ANDROID_DEFAULTS from these rows).

The patterns are the public catalogue LeakCanary ships as its Android
reference matchers: references the framework or a vendor build holds on to
after the app is done with them, which an app can neither fix nor avoid.
Reached only through one of them, a leak is a *library* leak.  Each row:

    (pattern, class_name, name, sdk, manufacturer, description)

pattern is a hprofkit.match pattern; sdk an inclusive (low, high) range of
android.os.Build.VERSION.SDK_INT, either end None for open, or None for every
level; manufacturer compared with android.os.Build.MANUFACTURER ignoring case,
None for every maker.  SDK ranges are the levels where the bug was reported;
a range that is too wide only marks a leak as a library leak.
"""

from __future__ import annotations

from typing import Optional

SAMSUNG, LG, MOTOROLA, HUAWEI, MEIZU, SHARP = "samsung", "LGE", "motorola", "HUAWEI", "Meizu", "SHARP"
ONE_PLUS, RAZER, XIAOMI, NVIDIA, VIVO = "OnePlus", "Razer", "Xiaomi", "NVIDIA", "vivo"

_IMM = "android.view.inputmethod.InputMethodManager"
_IMM_DESCRIPTION = ("When a view that takes keyboard input is detached, InputMethodManager keeps a reference to it "
                    "until another view asks for keyboard input.")
_STUB = "held by native code as a binder stub until the other process lets it go"

# (pattern, class_name, name, sdk, manufacturer, description)
KnownReference = tuple[str, Optional[str], Optional[str], Optional[tuple[Optional[int], Optional[int]]],
                       Optional[str], str]
KNOWN_LEAKS: tuple[KnownReference, ...] = (
    # --- AOSP -----------------------------------------------------------------
    ("instance_field", "android.app.ActivityThread$ActivityClientRecord", "nextIdle", (19, 27), None,
     "ActivityThread keeps a destroyed activity's client record as the nextIdle of another record until the main "
     "thread goes idle."),
    ("instance_field", "android.app.ActivityThread", "mNewActivities", (19, 27), None,
     "ActivityThread holds new activities in mNewActivities until the main thread goes idle."),
    ("instance_field", "android.widget.Editor$SpanController", "this$0", (None, 19), None,
     "Before KitKat, TextView.onSaveInstanceState() copied its text with SpannableString, which keeps the editor's "
     "NoCopySpan and so the TextView in the saved state."),
    ("instance_field", "android.widget.Editor$EasyEditSpanController", "this$0", (None, 19), None,
     "Before KitKat, TextView.onSaveInstanceState() copied its text with SpannableString, which keeps the editor's "
     "NoCopySpan and so the TextView in the saved state."),
    ("static_field", "android.media.session.MediaSessionLegacyHelper", "sInstance", (21, 21), None,
     "MediaSessionLegacyHelper is a lazily created singleton that keeps the context of its first caller."),
    ("static_field", "android.text.TextLine", "sCached", (None, 22), None,
     "TextLine.sCached pools TextLine instances that recycle() did not always clear, keeping their spans."),
    ("instance_field", "android.os.Message", "obj", (None, 20), None,
     "A thread waiting on a blocking queue keeps its last dequeued Message as a stack local."),
    ("instance_field", "android.os.Message", "next", (None, 20), None,
     "A thread waiting on a blocking queue keeps its last dequeued Message as a stack local."),
    ("instance_field", "android.os.Message", "target", (None, 20), None,
     "A thread waiting on a blocking queue keeps its last dequeued Message as a stack local."),
    ("instance_field", _IMM, "mNextServedView", (15, 33), None, _IMM_DESCRIPTION),
    ("instance_field", _IMM, "mServedView", (15, 33), None, _IMM_DESCRIPTION),
    ("instance_field", _IMM, "mServedInputConnection", (15, 33), None, _IMM_DESCRIPTION),
    ("instance_field", _IMM, "mCurRootView", (15, 33), None, _IMM_DESCRIPTION),
    ("instance_field", _IMM, "mImeInsetsConsumer", (30, 33), None, _IMM_DESCRIPTION),
    ("instance_field", _IMM, "mLastSrvView", (23, 28), HUAWEI, _IMM_DESCRIPTION),
    ("root_class", _IMM + "$ControlledInputConnectionWrapper", None, None, None,
     "InputMethodManager's ControlledInputConnectionWrapper is " + _STUB + "; it keeps the served view's input "
     "connection."),
    ("instance_field", "android.animation.LayoutTransition$1", "val$parent", (14, 22), None,
     "LayoutTransition keeps its parent ViewGroup through a ViewTreeObserver.OnPreDrawListener registered on the "
     "root view."),
    ("instance_field", "android.view.textservice.SpellCheckerSession$1", "this$0", (16, 24), None,
     "SpellCheckerSession's listener handler keeps the session, and its context, when the session closes before "
     "the spell checker service connects."),
    ("instance_field", "android.widget.SpellChecker$1", "this$0", (22, 22), None,
     "SpellChecker's pending spell runnable keeps a detached view when the session closes without removing it."),
    ("instance_field", "android.support.v7.internal.widget.ActivityChooserModel", "mActivityChoserModelPolicy",
     (15, 22), None, "ActivityChooserModel keeps the last ActivityChooserModelPolicy set, often an activity."),
    ("instance_field", "android.widget.ActivityChooserModel", "mActivityChoserModelPolicy", (15, 22), None,
     "ActivityChooserModel keeps the last ActivityChooserModelPolicy set, often an activity."),
    ("instance_field", "android.media.projection.MediaProjection$MediaProjectionCallback", "this$0", (22, 28),
     None, "MediaProjectionCallback is held by another process and keeps its MediaProjection, whose context is an "
     "activity."),
    ("instance_field", "android.speech.SpeechRecognizer$InternalListener", "this$0", (None, 20), None,
     "Before Android 5, SpeechRecognizer.InternalListener was an inner class that kept the SpeechRecognizer and "
     "its activity context."),
    ("instance_field", "android.accounts.AccountManager$AmsTask$Response", "this$1", (None, 27), None,
     "AccountManager's AmsTask response is " + _STUB + "."),
    ("instance_field", "android.media.MediaScannerConnection", "mContext", (None, 22), None,
     "MediaScannerConnection.scanFile() takes a context, and the service connection may outlive the activity."),
    ("instance_field", "android.os.UserManager", "mContext", (18, 25), None,
     "UserManager caches the first instance in a static, created with the caller's (activity) context."),
    ("instance_field", "android.appwidget.AppWidgetHost$Callbacks", "this$0", (None, 21), None,
     "AppWidgetHost's callbacks are " + _STUB + "."),
    ("instance_field", "android.media.AudioManager$1", "this$0", (None, 22), None,
     "Before Android M, VideoView took audio focus and never gave it up, which keeps its activity through "
     "AudioManager."),
    ("instance_field", "android.widget.Editor$Blink", "this$0", (None, 22), None,
     "The cursor blink of an EditText is a delayed Message, posted again after the dialog holding it is gone."),
    ("static_field", "android.net.ConnectivityManager", "sInstance", (None, 23), None,
     "ConnectivityManager keeps its first instance in sInstance, created with the caller's (activity) context."),
    ("instance_field", "android.view.accessibility.AccessibilityNodeInfo", "mOriginalText", (26, 27), None,
     "AccessibilityNodeInfo.clear() does not clear mOriginalText, so pooled infos keep text spans."),
    ("instance_field", "android.app.assist.AssistStructure$ViewNodeText", "mText", (24, None), None,
     "AssistStructure (assistant, autofill) keeps the text spannables of the screen."),
    ("instance_field", "android.widget.AccessibilityIterators$LineTextSegmentIterator", "mLayout", (27, 27), None,
     "AccessibilityIterators keep text layouts, which keep spans."),
    ("instance_field", "android.hardware.biometrics.BiometricPrompt", "mFingerprintManager", (28, 28), None,
     "BiometricPrompt keeps a FingerprintManager created with a destroyed activity."),
    ("instance_field", "android.widget.Magnifier$InternalPopupWindow", "mCallback", (28, 28), None,
     "Magnifier's popup window registers a frame callback that native rendering code keeps."),
    ("instance_field", "com.android.internal.policy.BackdropFrameRenderer", "mDecorView", (24, 28), None,
     "BackdropFrameRenderer's thread may keep running after releaseRenderer() and keeps the decor view."),
    ("instance_field", "android.view.ViewGroup$ViewLocationHolder", "mRoot", (28, 28), None,
     "In Android P, ViewLocationHolder.clear() does not clear mRoot."),
    ("instance_field", "android.view.accessibility.AccessibilityNodeIdManager", "mIdsToViews", (28, None), None,
     "AccessibilityNodeIdManager keeps every view from onAttachedToWindow() until it is detached."),
    ("instance_field", "android.speech.tts.TextToSpeech", "mContext", (24, 24), None,
     "TextToSpeech.shutdown() does not drop its context, and another process keeps the instance."),
    ("instance_field", "android.speech.tts.TtsEngines", "mContext", (24, 24), None,
     "TextToSpeech.shutdown() does not drop its context, and another process keeps the instance."),
    ("root_class", "android.widget.Toast$TN", None, None, None,
     "Toast.TN is held by a native global reference while the toast is shown through IPC."),
    ("instance_field", "android.app.ApplicationPackageManager$HasSystemFeatureQuery", "this$0", (33, 33), None,
     "ApplicationPackageManager's static feature cache keeps the package manager of the first caller's context."),
    ("instance_field", "android.companion.CompanionDeviceService$Stub", "this$0", (31, None), None,
     "CompanionDeviceService's stub is " + _STUB + "."),
    ("root_class", "android.graphics.animation.RenderNodeAnimator", None, (31, None), None,
     "A view detached while its ripple animation runs: native code keeps the RenderNodeAnimator, and so the view."),
    ("root_class", "android.media.PlayerBase$1", None, (26, None), None,
     "PlayerBase's app-ops callback is " + _STUB + "; it keeps the player."),
    ("instance_field", "android.window.WindowOnBackInvokedDispatcher$OnBackInvokedCallbackWrapper", "mCallback",
     (33, None), None, "The back-invoked callback wrapper is " + _STUB + "; it keeps the callback."),
    ("instance_field", "android.nfc.cardemulation.HostApduService$MsgHandler", "this$0", (29, 33), None,
     "HostApduService's message handler is " + _STUB + "; it keeps the service."),
    ("instance_field", "android.app.AppOpsManager$3", "val$callback", (30, 30), None,
     "AppOpsManager's op-noted callback is " + _STUB + "."),
    ("instance_field", "android.view.ViewGroup", "mPreSortedChildren", (28, 28), None,
     "ViewGroup.mPreSortedChildren is not always cleared after dispatching, keeping removed children."),
    ("root_class", "android.app.job.JobService$JobHandler", None, (None, 23), None,
     "JobService's handler is " + _STUB + "; it keeps the service."),
    ("root_class", "android.service.dreams.DreamService$1", None, (21, None), None,
     "DreamService's binder is " + _STUB + "; it keeps the service."),
    ("instance_field", "android.os.ResultReceiver$MyResultReceiver", "this$0", None, None,
     "ResultReceiver's binder is " + _STUB + "; it keeps the receiver."),
    ("instance_field", "android.app.LoadedApk$ServiceDispatcher$InnerConnection", "mDispatcher", None, None,
     "A bound service's connection is " + _STUB + " after unbinding."),
    ("instance_field", "android.view.inputmethod.InputMethodManager$1", "this$0", (None, 23), None,
     _IMM_DESCRIPTION),
    ("instance_field", "android.view.Choreographer$FrameDisplayEventReceiver", "mMessageQueue", None, None,
     "The display event receiver keeps the main thread's MessageQueue, and so its pending messages."),
    ("static_field", "android.app.Instrumentation", "mRecommendActivity", (21, 22), MEIZU,
     "Meizu builds keep the last activity in Instrumentation.mRecommendActivity."),
    ("instance_field", "android.app.admin.DevicePolicyManager$SettingsObserver", "this$0", (19, 22), MOTOROLA,
     "Motorola builds keep DevicePolicyManager, and its context, in a settings observer."),
    ("static_field", "android.app.ExtendedStatusBarManager", "sInstance", (None, 28), SHARP,
     "Sharp builds keep ExtendedStatusBarManager, created with an activity context, in a static."),
    ("static_field", "com.oneplus.util.OemSceneCallBlocker", "sContext", (28, 28), ONE_PLUS,
     "OnePlus builds keep the last context in OemSceneCallBlocker.sContext."),
    ("static_field", "android.os.PerfMonitor", "mLastCallback", (28, 28), ONE_PLUS,
     "OnePlus builds keep the last performance-monitor callback, often a view, in a static."),
    ("instance_field", "android.text.method.TextKeyListener", "mContext", (28, 28), RAZER,
     "Razer builds keep a context in the shared TextKeyListener."),
    ("static_field", "android.content.res.ResourcesImpl", "mAppContext", (28, 28), XIAOMI,
     "Xiaomi builds keep a context in ResourcesImpl.mAppContext."),
    ("instance_field", "com.nvidia.ControllerMapper.MapperClient$ServiceClient", "this$0", (19, 22), NVIDIA,
     "NVIDIA builds keep MapperClient, and its context, in a service client."),
    # --- Samsung --------------------------------------------------------------
    ("static_field", "com.samsung.android.smartclip.SpenGestureManager", "mContext", (19, 19), SAMSUNG,
     "Samsung builds keep a context in SpenGestureManager.mContext."),
    ("instance_field", "android.sec.clipboard.ClipboardUIManager", "mContext", (19, 21), SAMSUNG,
     "Samsung builds keep the first activity context in the ClipboardUIManager singleton."),
    ("instance_field", "com.samsung.android.content.clipboard.SemClipboardManager", "mContext", (19, 24), SAMSUNG,
     "Samsung builds keep the first activity context in SemClipboardManager."),
    ("instance_field", "android.sec.clipboard.ClipboardExManager", "mContext", (23, 23), SAMSUNG,
     "Samsung builds keep the first activity context in ClipboardExManager."),
    ("instance_field", "android.sec.clipboard.ClipboardExManager", "mPersonaManager", (23, 23), SAMSUNG,
     "Samsung builds keep a PersonaManager, and its context, in ClipboardExManager."),
    ("instance_field", "android.widget.TextView$IClipboardDataPasteEventImpl", "this$0", (22, 23), SAMSUNG,
     "Samsung builds register TextViews with a clipboard paste listener that is never unregistered."),
    ("instance_field", "com.samsung.android.emergencymode.SemEmergencyManager", "mContext", (19, 24), SAMSUNG,
     "Samsung builds keep the first activity context in SemEmergencyManager."),
    ("instance_field", "com.samsung.android.knox.SemPersonaManager", "mContext", (24, 24), SAMSUNG,
     "Samsung builds keep an activity context in SemPersonaManager."),
    ("instance_field", "android.app.SemAppIconSolution", "mContext", (28, 29), SAMSUNG,
     "Samsung builds keep an activity context in SemAppIconSolution."),
    ("static_field", "com.android.org.chromium.android_webview.AwResource", "sResources", (19, 19), SAMSUNG,
     "Samsung's WebView keeps the Resources of the first activity using it."),
    ("static_field", "android.widget.TextView", "mLastHoveredView", (19, 31), SAMSUNG,
     "Samsung builds keep the last hovered TextView in a static."),
    ("instance_field", "android.os.PersonaManager", "mContext", (19, 19), SAMSUNG,
     "Samsung builds keep an activity context in PersonaManager."),
    ("instance_field", "android.content.res.Resources", "mContext", (19, 19), SAMSUNG,
     "Samsung builds keep an activity context in Resources."),
    ("instance_field", "android.view.ViewConfiguration", "mContext", (19, 19), SAMSUNG,
     "Samsung builds keep an activity context in the cached ViewConfiguration."),
    ("static_field", "android.media.AudioManager", "mContext_static", (19, 19), SAMSUNG,
     "Samsung builds keep the first activity context in AudioManager.mContext_static."),
    ("static_field", "android.app.ActivityManager", "mContext", (22, 23), SAMSUNG,
     "Samsung builds keep the first activity context in ActivityManager.mContext."),
    ("static_field", "android.widget.TextView", "mTargetView", (27, 27), SAMSUNG,
     "Samsung builds keep a TextView in the static TextView.mTargetView."),
    ("instance_field", "com.android.internal.policy.MultiWindowDecorSupport", "mWindow", (26, 29), SAMSUNG,
     "Samsung builds keep the window of a destroyed activity in MultiWindowDecorSupport."),
    ("static_field", _IMM, "mCurrentInputConnection", (28, 30), SAMSUNG,
     "Samsung builds keep the current input connection, and its view, in a static."),
    ("instance_field", "android.app.LoadedApk$ReceiverDispatcher$InnerReceiver", "mDispatcher", (28, 28), SAMSUNG,
     "Samsung builds keep unregistered broadcast receivers through their binder stub."),
    # --- LG -------------------------------------------------------------------
    ("static_field", "com.lge.systemservice.core.GestureBoostManager", "mContext", (24, 25), LG,
     "LG builds keep an activity context in the GestureBoostManager singleton."),
    ("static_field", "android.widget.BubblePopupHelper", "sHelper", (19, 22), LG,
     "LG builds keep a helper referencing a TextView in BubblePopupHelper.sHelper."),
    ("instance_field", "com.lge.systemservice.core.LGContext", "mContext", (21, 21), LG,
     "LG builds keep an activity context in LGContext."),
    ("instance_field", "com.lge.systemservice.core.SmartCoverManager", "mContext", (27, 27), LG,
     "LG builds keep an activity context in SmartCoverManager."),
    # --- Huawei, vivo ---------------------------------------------------------
    ("static_field", "android.gestureboost.GestureBoostManager", "mContext", (26, 27), HUAWEI,
     "Huawei builds keep an activity context in GestureBoostManager."),
    ("instance_field", "android.rms.iaware.FastgrabConfigReader", "mContext", (27, 28), HUAWEI,
     "Huawei builds keep an activity context in FastgrabConfigReader."),
    ("instance_field", "android.app.HwChangeButtonWindowCtrl", "mInstanceMap", (26, 28), HUAWEI,
     "Huawei builds keep activity windows in HwChangeButtonWindowCtrl.mInstanceMap."),
    ("instance_field", "android.app.Activity", "mWindowListener", (28, 28), VIVO,
     "vivo builds keep activities in a window listener."),
)

# References that are never strong in practice (LeakCanary ignores them).
IGNORED: tuple[KnownReference, ...] = (
    ("thread_local", None, "LeakCanary-Heap-Dump", None, None,
     "LeakCanary's heap-dump thread holds objects while it dumps the heap."),
    ("static_field", "leakcanary.internal.InternalLeakCanary", "resumedActivity", None, None,
     "LeakCanary's own reference to the resumed activity."),
    ("static_field", "com.squareup.leakcanary.internal.LeakCanaryInternals", "leakCanaryContext", None, None,
     "LeakCanary's own context reference (LeakCanary 1)."),
)
